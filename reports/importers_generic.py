"""The generic importer (format ``columns``): any delimited ratings file whose columns the user names.

Three layouts:

``long``               one rating per row; the ``participant``, ``item``, ``system`` and ``score``
                       columns are named (optional: ``system_b`` for pairwise scales, ``trial``,
                       ``time`` in seconds); a ``stimulus`` column split by ``stimulus_pattern``
                       may stand for ``item`` and ``system``.
``stimulus-by-rater``  one row per stimulus (``item`` and ``system`` columns, or ``stimulus`` +
                       ``stimulus_pattern``), one column per rater (its header is the rater id).
``rater-by-stimulus``  one row per rater (a ``participant`` column), one column per stimulus; a
                       column header is split into item and system by ``stimulus_pattern``.

``skip_rows`` lines below the header hold no data (a survey tool's question-text rows).
In matrices a cell equal to a ``missing`` code (e.g. ``-1``) or empty is no rating. Columns named
in ``ignore`` (e.g. a ``MOS`` column) are not raters/stimuli. A file without a header names its
columns by position (``1``, ``2``, …). The separator is sniffed unless given. The scale is given
or read off the values (with a note). Every problem is one line naming the file, line and column.

A spec comes from the command line (``--columns participant=rater,item=clip,system=cond,score=rating``
and friends) or a small YAML file (:func:`spec_from_yaml`)::

    layout: stimulus-by-rater
    columns: {item: video, system: distortion}
    missing: [-1]
    scale: acr5
    ignore: [MOS, SD]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.errors import ConfigError, FileFormatError, InputError

LAYOUTS = ("long", "stimulus-by-rater", "rater-by-stimulus")
#: Roles a column can play, per layout (the spec's ``columns`` keys).
ROLES = ("participant", "item", "system", "system_b", "score", "trial", "time", "stimulus")
SPEC_KEYS = ("layout", "columns", "scale", "missing", "header", "separator", "stimulus_pattern", "ignore",
             "skip_rows")


@dataclass(frozen=True)
class TableSpec:
    """How to read a ratings file with the generic importer.

    Attributes:
        columns: role (one of :data:`ROLES`) → the file's column name (or 1-based position when
            ``header`` is False).
        layout: one of :data:`LAYOUTS`.
        scale: a :data:`reports.table.SCALES` name, or None to read it off the values.
        missing: cell values that mean "no rating" (compared as text and as numbers).
        header: whether the first line names the columns.
        separator: the field separator, or None to sniff it.
        stimulus_pattern: regular expression with named groups ``item`` and ``system`` that splits
            a stimulus name (a ``stimulus`` cell, or a matrix's column header) into both.
        ignore: columns that are neither raters nor stimuli in a matrix.
        skip_rows: lines below the header that hold no data (a survey tool's question-text and
            import-id rows).
        source: where the spec came from, for messages (``--columns`` or a YAML path).
    """

    columns: dict = field(default_factory=dict)
    layout: str = "long"
    scale: str | None = None
    missing: tuple = ()
    header: bool = True
    separator: str | None = None
    stimulus_pattern: str | None = None
    ignore: tuple = ()
    skip_rows: int = 0
    source: str = "--columns"


def parse_columns(text: str) -> dict[str, str]:
    """``"participant=rater,item=clip"`` → ``{"participant": "rater", "item": "clip"}``.

    Raises:
        InputError: naming the part that is not ``role=column`` or whose role is unknown.
    """
    out = {}
    for part in [p for p in str(text).split(",") if p.strip()]:
        role, eq, col = part.partition("=")
        role = role.strip().lower()
        if not eq or not col.strip():
            raise InputError(f"--columns: {part.strip()!r} is not ROLE=COLUMN (e.g. participant=rater)")
        if role not in ROLES:
            raise InputError(f"--columns: unknown role {role!r} in {part.strip()!r}; roles are {', '.join(ROLES)}")
        out[role] = col.strip()
    return out


def make_spec(data: dict, source: str) -> TableSpec:
    """A :class:`TableSpec` from a mapping of :data:`SPEC_KEYS` (a YAML file or the CLI options).

    Raises:
        ConfigError: naming ``source`` and the key with a wrong value.
    """
    from reports.table import SCALES

    unknown = [k for k in data if k not in SPEC_KEYS]
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(map(str, unknown))}; expected {', '.join(SPEC_KEYS)}")
    cols = data.get("columns") or {}
    if isinstance(cols, str):
        try:
            cols = parse_columns(cols)
        except InputError as exc:
            raise ConfigError(f"{source}: key 'columns': {exc}") from None
    if not isinstance(cols, dict):
        raise ConfigError(f"{source}: key 'columns': expected a mapping of role to column "
                          f"(roles: {', '.join(ROLES)}), got {type(cols).__name__}")
    bad = [str(k) for k in cols if str(k).lower() not in ROLES]
    if bad:
        raise ConfigError(f"{source}: key 'columns': unknown role(s) {', '.join(bad)}; roles are {', '.join(ROLES)}")
    layout = str(data.get("layout") or "long").strip().lower()
    if layout not in LAYOUTS:
        raise ConfigError(f"{source}: key 'layout': {layout!r}; expected one of {', '.join(LAYOUTS)}")
    scale = data.get("scale")
    if scale is not None and str(scale) not in SCALES:
        raise ConfigError(f"{source}: key 'scale': unknown scale {scale!r}; expected one of {', '.join(SCALES)}")
    missing = data.get("missing", ())
    missing = tuple(str(m).strip() for m in (missing if isinstance(missing, (list, tuple)) else [missing])
                    if m is not None)
    header = data.get("header", True)
    if not isinstance(header, bool):
        raise ConfigError(f"{source}: key 'header': expected true or false, got {header!r}")
    sep = data.get("separator")
    sep = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";"}.get(str(sep).lower(), sep) if sep else None
    if sep is not None and len(str(sep)) != 1:
        raise ConfigError(f"{source}: key 'separator': expected one character (or tab), got {sep!r}")
    pattern = data.get("stimulus_pattern")
    if pattern:
        try:
            groups = re.compile(str(pattern)).groupindex
        except re.error as exc:
            raise ConfigError(f"{source}: key 'stimulus_pattern': not a regular expression ({exc})") from None
        if not {"item", "system"} <= set(groups):
            raise ConfigError(f"{source}: key 'stimulus_pattern': needs the named groups (?P<item>…) and "
                              f"(?P<system>…), has {', '.join(groups) or 'none'}")
    ignore = data.get("ignore") or ()
    ignore = tuple(str(c).strip() for c in (ignore if isinstance(ignore, (list, tuple)) else str(ignore).split(",")))
    skip = data.get("skip_rows", 0)
    if isinstance(skip, bool) or not str(skip).strip().isdigit():
        raise ConfigError(f"{source}: key 'skip_rows': expected a whole number ≥ 0, got {skip!r}")
    skip = int(str(skip).strip())
    spec = TableSpec(columns={str(k).lower(): str(v).strip() for k, v in cols.items()}, layout=layout,
                     scale=str(scale) if scale is not None else None, missing=missing, header=header,
                     separator=sep, stimulus_pattern=str(pattern) if pattern else None, ignore=ignore,
                     skip_rows=skip, source=source)
    _check_roles(spec)
    return spec


def _check_roles(spec: TableSpec) -> None:
    """The roles a layout needs are named; raises ConfigError naming the missing ones."""
    have = set(spec.columns)
    split = spec.stimulus_pattern is not None and "stimulus" in have
    need = {"long": ["participant", "score"] + ([] if split else ["item", "system"]),
            "stimulus-by-rater": [] if split else ["item", "system"],
            "rater-by-stimulus": ["participant"]}[spec.layout]
    lack = [r for r in need if r not in have]
    if spec.layout == "rater-by-stimulus" and not spec.stimulus_pattern:
        lack.append("stimulus_pattern (splits each stimulus column's header into item and system)")
    if "stimulus" in have and not spec.stimulus_pattern:
        lack.append("stimulus_pattern (to split the stimulus column into item and system)")
    if lack:
        example = {"long": "participant=rater,item=clip,system=cond,score=rating",
                   "stimulus-by-rater": "item=clip,system=cond",
                   "rater-by-stimulus": "participant=rater"}[spec.layout]
        raise ConfigError(f"{spec.source}: layout {spec.layout} needs {', '.join(lack)} "
                          f"(e.g. --columns {example})")


def spec_from_yaml(path: str | Path) -> TableSpec:
    """A :class:`TableSpec` from a small YAML file (keys :data:`SPEC_KEYS`)."""
    import yaml

    from evalkit.errors import yaml_error
    from evalkit.textfile import read_config_text

    text = read_config_text(path, "column spec")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise yaml_error(path, exc, text) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with keys {', '.join(SPEC_KEYS)}")
    return make_spec(data, str(path))


def from_table_spec(path: str | Path, spec: TableSpec | None) -> pd.DataFrame:
    """Read ``path`` as ``spec`` says → validated long-format table (notes in ``attrs["notes"]``)."""
    from reports.io import read_csv_table, separator_name

    if spec is None:
        raise InputError(f"{path}: format 'columns' needs --columns ROLE=COLUMN,… (or --column-spec FILE.yaml) "
                         "naming the participant, item, system and score columns")
    raw = read_csv_table(path, sep=spec.separator, header=spec.header)
    raw.columns = [str(c).strip() for c in raw.columns]
    if spec.skip_rows:
        first = raw.attrs.get("first_line", 2) + spec.skip_rows
        raw = raw.iloc[spec.skip_rows:].reset_index(drop=True)
        raw.attrs.update(first_line=first)
    if raw.empty:
        raise FileFormatError(path, None, "no rows of ratings" + (" below the header" if spec.header else "")
                              + (f" after the {spec.skip_rows} skipped line(s)" if spec.skip_rows else ""))
    notes = []
    if raw.attrs.get("separator", ",") != ",":
        notes.append(f"read as values separated by {separator_name(raw.attrs['separator'])}")
    if spec.header:
        _refuse_duplicate_headers(path, raw.attrs.get("separator", ","))
    cols = _resolve(raw, spec, str(path))
    reader = {"long": _long, "stimulus-by-rater": _stimulus_by_rater, "rater-by-stimulus": _rater_by_stimulus}
    cells = reader[spec.layout](raw, spec, cols, str(path))
    return _finish(cells, spec, str(path), notes)


def _refuse_duplicate_headers(path, sep: str) -> None:
    """Two columns with the same name are one rater (or stimulus) twice: an error naming it (pandas
    would silently rename the second ``name.1``)."""
    import csv

    from evalkit.textfile import read_utf8_text

    first = next(csv.reader(read_utf8_text(path).splitlines()[:1], delimiter=sep), [])
    names = [c.strip() for c in first]
    dup = next((c for k, c in enumerate(names) if c and c in names[:k]), None)
    if dup is not None:
        raise FileFormatError(path, 1, f"column {dup!r} appears twice in the header; expected one column per "
                                       "rater, stimulus or role")


def _resolve(raw: pd.DataFrame, spec: TableSpec, path: str) -> dict[str, str]:
    """Role → the file's column (names matched without regard to case); a missing one is an error
    naming the columns the file has."""
    by_lower = {c.lower(): c for c in raw.columns}
    out = {}
    for role, name in spec.columns.items():
        col = name if name in raw.columns else by_lower.get(name.lower())
        if col is None:
            shown = ", ".join(list(raw.columns)[:8]) + (f", … ({raw.shape[1]} columns)" if raw.shape[1] > 8 else "")
            hint = (" (a file without a header names columns by position 1, 2, …: pass --no-header)"
                    if name.isdigit() and spec.header else "")
            raise FileFormatError(path, 1 if spec.header else None,
                                  f"no column {name!r} for {role} ({spec.source}); the file's columns are "
                                  f"{shown}{hint}")
        out[role] = col
    return out


def _split_stimulus(names: pd.Series, spec: TableSpec, path: str, where) -> tuple[pd.Series, pd.Series]:
    """(item, system) of each stimulus name by ``stimulus_pattern``; ``where(i)`` gives the
    (line, column) a name that does not match is reported at."""
    rx = re.compile(spec.stimulus_pattern)
    items, systems = [], []
    for i, name in enumerate(names):
        m = rx.search(str(name))
        if not m or not m.group("item") or not m.group("system"):
            line, col = where(i)
            raise FileFormatError(path, line, f"column {col!r}: stimulus {str(name)!r} does not match "
                                              f"stimulus_pattern {spec.stimulus_pattern!r} (groups item and system)")
        items.append(m.group("item"))
        systems.append(m.group("system"))
    return pd.Series(items, index=names.index), pd.Series(systems, index=names.index)


def _long(raw, spec, cols, path) -> pd.DataFrame:
    first = raw.attrs.get("first_line", 2)
    lines = np.arange(len(raw)) + first
    t = lambda role: raw[cols[role]].fillna("").astype(str).str.strip()  # noqa: E731
    if "stimulus" in cols and "item" not in cols:
        item, system = _split_stimulus(t("stimulus"), spec, path, lambda i: (int(lines[i]), cols["stimulus"]))
    else:
        item, system = t("item"), t("system")
    out = pd.DataFrame({"participant": t("participant"), "item": item, "system_a": system,
                        "system_b": t("system_b") if "system_b" in cols else "",
                        "raw_answer": t("score"), "line": lines, "column": cols["score"]})
    if "trial" in cols:
        out["trial"] = t("trial")
    if "time" in cols:
        out["response_time_s"] = t("time")
    return out


def _stimulus_by_rater(raw, spec, cols, path) -> pd.DataFrame:
    first = raw.attrs.get("first_line", 2)
    lines = np.arange(len(raw)) + first
    t = lambda c: raw[c].fillna("").astype(str).str.strip()  # noqa: E731
    if "stimulus" in cols and "item" not in cols:
        item, system = _split_stimulus(t(cols["stimulus"]), spec, path, lambda i: (int(lines[i]), cols["stimulus"]))
    else:
        item, system = t(cols["item"]), t(cols["system"])
    raters = [c for c in raw.columns if c not in cols.values() and c not in spec.ignore]
    if not raters:
        raise FileFormatError(path, 1, "no rater columns: every column is named in --columns or ignore")
    parts = [pd.DataFrame({"participant": r, "item": item, "system_a": system, "system_b": "",
                           "raw_answer": t(r), "line": lines, "column": r}) for r in raters]
    # cells in file order (line by line, left to right), so the first problem is the first in the file
    return pd.concat(parts, ignore_index=True).sort_values("line", kind="stable").reset_index(drop=True)


def _rater_by_stimulus(raw, spec, cols, path) -> pd.DataFrame:
    first = raw.attrs.get("first_line", 2)
    lines = np.arange(len(raw)) + first
    who = raw[cols["participant"]].fillna("").astype(str).str.strip()
    stimuli = [c for c in raw.columns if c not in cols.values() and c not in spec.ignore]
    if not stimuli:
        raise FileFormatError(path, 1, "no stimulus columns: every column is named in --columns or ignore")
    head = pd.Series(stimuli)
    item, system = _split_stimulus(head, spec, path, lambda i: (1 if spec.header else None, stimuli[i]))
    parts = [pd.DataFrame({"participant": who, "item": item[k], "system_a": system[k], "system_b": "",
                           "raw_answer": raw[c].fillna("").astype(str).str.strip(), "line": lines, "column": c})
             for k, c in enumerate(stimuli)]
    return pd.concat(parts, ignore_index=True).sort_values("line", kind="stable").reset_index(drop=True)


def _is_missing(values: pd.Series, codes) -> pd.Series:
    """Empty cells and cells equal to a missing code (as text, or as a number: ``-1`` = ``-1.0``)."""
    out = values.eq("")
    if codes:
        out |= values.isin(list(codes))
        nums = [float(c) for c in codes if _num(c) is not None]
        if nums:
            out |= pd.to_numeric(values, errors="coerce").isin(nums)
    return out


def _num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def infer_scale(values: np.ndarray, pairwise: bool) -> str | None:
    """The scale whose range and grid hold every value, or None: pairwise ``pref3`` (−1..1),
    ``cmos5`` (−2..2), ``cmos7`` (−3..3); absolute ``acr5`` (integers 1–5), ``likert7`` (1–7),
    ``mushra`` (0–100)."""
    if len(values) == 0:
        return None
    lo, hi = float(values.min()), float(values.max())
    whole = bool(np.all(values == np.round(values)))
    order = (("pref3", -1, 1, True), ("cmos5", -2, 2, True), ("cmos7", -3, 3, True)) if pairwise else \
        (("acr5", 1, 5, True), ("likert7", 1, 7, True), ("mushra", 0, 100, False))
    for name, low, high, integer in order:
        if lo >= low and hi <= high and (whole or not integer):
            return name
    return None


def _finish(cells: pd.DataFrame, spec: TableSpec, path: str, notes: list) -> pd.DataFrame:
    """Drop missing cells, check every score (one line naming file, line and column), pick the
    scale, validate."""
    from reports.table import SCALES, validate_ratings

    miss = _is_missing(cells["raw_answer"], spec.missing).to_numpy()
    if miss.any():
        notes.append(f"{int(miss.sum())} empty or missing-code cell(s) ({', '.join(spec.missing) or 'empty'}) "
                     "are no rating")
    cells = cells[~miss].reset_index(drop=True)
    if cells.empty:
        raise FileFormatError(path, None, "no ratings: every score cell is empty or a missing code"
                                          + (f" ({', '.join(spec.missing)})" if spec.missing else ""))
    score = pd.to_numeric(cells["raw_answer"], errors="coerce")
    bad = (score.isna() | ~np.isfinite(score.fillna(0))).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        extra = " (list codes for no rating under missing, e.g. --missing -1)" if spec.layout != "long" else ""
        raise FileFormatError(path, int(cells["line"][i]), f"column {cells['column'][i]!r}: expected a number, "
                                                           f"got {cells['raw_answer'][i]!r}{extra}")
    pairwise = "system_b" in spec.columns
    scale = spec.scale
    if scale is None:
        scale = infer_scale(score.to_numpy(dtype=float), pairwise)
        if scale is None:
            raise InputError(f"{path}: cannot tell the scale from the scores ({score.min():g} to {score.max():g}); "
                             f"name it with --scale (one of {', '.join(SCALES)})")
        notes.append(f"scale {scale} read off the values ({score.min():g}–{score.max():g}); name it with "
                     "--scale if that is wrong")
    sc = SCALES[scale]
    out_of = ((score < sc.low) | (score > sc.high) | ((score != score.round()) if sc.integer else False)).to_numpy()
    if out_of.any():
        i = int(np.flatnonzero(out_of)[0])
        raise FileFormatError(path, int(cells["line"][i]), f"column {cells['column'][i]!r}: {cells['raw_answer'][i]} "
                                                           f"is not {'an integer' if sc.integer else 'a number'} in "
                                                           f"[{sc.low:g}, {sc.high:g}] (scale {scale})")
    cells = cells.assign(score=score, scale=scale)
    lines = cells.pop("line").to_numpy()
    column = cells.pop("column")
    names = {"participant": spec.columns.get("participant", "the rater column"),
             "item": spec.columns.get("item", spec.columns.get("stimulus", "the stimulus")),
             "system_a": spec.columns.get("system", spec.columns.get("stimulus", "the stimulus")),
             "system_b": spec.columns.get("system_b", "system_b"), "score": str(column.iloc[0]),
             "trial": spec.columns.get("trial", "trial"), "response_time_s": spec.columns.get("time", "time")}
    res = validate_ratings(cells, path, lines=lines, names=names)
    res.attrs["notes"] = notes
    return res
