"""Importers of webMUSHRA results collected by other servers: pymushra exports and HEMVIP's.

``pymushra``  the CSV (``;``-separated) or JSON export of a pymushra server: one row per response,
              columns ``wm_*`` (the page: ``wm_id``, ``wm_type``, ``wm_testId``, ``wm_date``,
              ``wm_config``), ``questionaire_*`` (the participant form and ``questionaire_uuid``,
              one per submitted session) and ``responses_*`` (the answer: ``responses_stimulus``,
              ``responses_score``, ``responses_time`` on MUSHRA pages, ``responses_reference``,
              ``responses_nonReference``, ``responses_answer`` on paired-comparison pages,
              ``responses_stimulusRating`` on single-stimulus Likert pages). pymushra builds the
              columns from a set, so their order differs between exports: columns are found by
              name, in any order and any case.
``hemvip``    HEMVIP's exported results (the GENEA challenges 2020–2023): a JSON list of submitted
              sessions, each ``{"testId", "userId", "participant": {"name": [...], "response":
              [...]}, "trials": [{"id", "type", "responses": [{"stimulus", "score", "time"}]}]}``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from evalkit.errors import FileFormatError

#: pymushra page types evalkit reads, and the ``responses_*`` columns each needs.
PYMUSHRA_TYPES = {
    "mushra": ("responses_stimulus", "responses_score"),
    "paired_comparison": ("responses_reference", "responses_nonreference", "responses_answer"),
    "likert_single_stimulus": ("responses_stimulus", "responses_stimulusrating"),
}
PYMUSHRA_SIGNATURE = ("wm_id", "wm_type", "questionaire_uuid")


def is_pymushra(columns) -> bool:
    """True when a header has pymushra's page, participant and response column families."""
    lower = {str(c).strip().lower() for c in columns}
    return set(PYMUSHRA_SIGNATURE) <= lower and any(c.startswith("responses_") for c in lower)


def _text(series: pd.Series) -> pd.Series:
    return series.fillna("").astype(str).str.strip()


def from_pymushra(df: pd.DataFrame, path: str | None = None, *, lines=None) -> pd.DataFrame:
    """A pymushra export (columns in any order) → long format.

    Args:
        df: the export as strings, one row per response.
        path: the file, for messages.
        lines: line (or record) number of each row in the file (default: row i is line i + 2).

    participant = ``questionaire_uuid``, trial = item = ``wm_id`` (the page). ``mushra`` pages:
    system = ``responses_stimulus``, scale ``mushra`` (or ``acr5``/``likert7`` when every value is
    an integer in 1–5/1–7), ``responses_time`` in ms. ``paired_comparison`` pages: as webMUSHRA's
    ``paired_comparison.csv`` (reference identified +1, taken for the condition −1, undecided 0;
    ``unknown`` dropped). ``likert_single_stimulus`` pages: system = ``responses_stimulus``, scale
    ``acr5`` (values ≤ 5) or ``likert7``. Rows of other page types are left out with a note.
    """
    from reports.table import validate_ratings

    cols = {str(c).strip().lower(): c for c in df.columns}
    missing = [c for c in PYMUSHRA_SIGNATURE if c not in cols]
    if missing:
        raise FileFormatError(path, 1, f"pymushra export lacks column(s) {', '.join(missing)} (found "
                                       f"{len(df.columns)} columns; a pymushra export has wm_*, "
                                       "questionaire_* and responses_* columns)")
    lines = np.asarray(lines if lines is not None else np.arange(len(df)) + 2)
    kind = _text(df[cols["wm_type"]]).str.lower()
    parts, notes, part_lines = [], [], []
    for ptype, needed in PYMUSHRA_TYPES.items():
        rows = (kind == ptype).to_numpy()
        if not rows.any():
            continue
        lack = [c for c in needed if c not in cols]
        if lack:
            first = int(lines[np.flatnonzero(rows)[0]])
            raise FileFormatError(path, first, f"wm_type {ptype!r}: the export lacks column(s) "
                                               f"{', '.join(_spelt(c) for c in lack)} that its rows need")
        part, sub_lines, part_notes = _pymushra_part(df[rows], ptype, cols, lines[rows])
        notes += part_notes
        parts.append(part)
        part_lines.append(sub_lines)
    other = ~kind.isin(list(PYMUSHRA_TYPES)).to_numpy()
    if other.any():
        found = ", ".join(sorted(set(kind[other]) - {""}) + (["(empty)"] if (kind[other] == "").any() else []))
        if not parts or all(len(p) == 0 for p in parts):
            raise FileFormatError(path, None, f"pymushra export with no rows evalkit reads: its wm_type values "
                                              f"are {found}; evalkit reads {', '.join(PYMUSHRA_TYPES)} pages")
        notes.append(f"{int(other.sum())} row(s) of page type(s) {found} left out (evalkit reads "
                     f"{', '.join(PYMUSHRA_TYPES)} pages)")
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if out.empty:
        raise FileFormatError(path, None, "no answered responses in the pymushra export")
    res = validate_ratings(out, path, lines=np.concatenate(part_lines),
                           names={"participant": "questionaire_uuid", "trial": "wm_id", "item": "wm_id",
                                  "system_a": "responses_stimulus", "system_b": "responses_nonReference",
                                  "score": "responses_score"})
    res.attrs["notes"] = notes
    return res


def _pymushra_part(sub: pd.DataFrame, ptype: str, cols: dict, sub_lines: np.ndarray):
    """(long rows, their lines, notes) of the pymushra rows of one page type."""
    col = lambda name: sub[cols[name]] if name in cols else pd.Series([""] * len(sub), index=sub.index)  # noqa: E731
    notes = []
    base = {"participant": _text(sub[cols["questionaire_uuid"]]), "trial": _text(sub[cols["wm_id"]]),
            "item": _text(sub[cols["wm_id"]]), "side_shown": "", "flags": "",
            "response_time_s": pd.to_numeric(col("responses_time"), errors="coerce") / 1000.0}
    if ptype == "paired_comparison":
        ans = _text(sub[cols["responses_answer"]]).str.lower()
        keep = (ans != "unknown").to_numpy()
        if (~keep).any():
            notes.append(f"{int((~keep).sum())} unanswered ('unknown') paired comparison(s) dropped")
        part = pd.DataFrame({**base, "system_a": _text(sub[cols["responses_reference"]]),
                             "system_b": _text(sub[cols["responses_nonreference"]]), "raw_answer": ans,
                             "score": ans.map({"correct": 1.0, "incorrect": -1.0, "undecided": 0.0})
                             .where(ans.isin(["correct", "incorrect", "undecided"]), ans),
                             "scale": "pref3"})[keep]
        sub_lines = sub_lines[keep]
    else:
        score_col = "responses_score" if ptype == "mushra" else "responses_stimulusrating"
        score = _text(sub[cols[score_col]])
        if ptype == "mushra":
            scale, note = scale_from_values(score, "mushra")
        else:
            v = pd.to_numeric(score, errors="coerce")
            scale, note = ("acr5" if not v.notna().any() or v.max() <= 5 else "likert7"), ""
        notes += [note] if note else []
        part = pd.DataFrame({**base, "system_a": _text(sub[cols["responses_stimulus"]]), "system_b": "",
                             "raw_answer": score, "score": score, "scale": scale})
    return part, sub_lines, notes


def _spelt(lower: str) -> str:
    """A pymushra column as pymushra spells it (``responses_nonReference``)."""
    return {"responses_nonreference": "responses_nonReference",
            "responses_stimulusrating": "responses_stimulusRating"}.get(lower, lower)


def _json_line(text: str, needle: str, start: int = 0) -> tuple[int | None, int]:
    """(1-based line of the first ``needle`` at or after ``start``, its offset) in ``text``."""
    pos = text.find(needle, start)
    return (text.count("\n", 0, pos) + 1, pos) if pos >= 0 else (None, start)


def pymushra_json_records(data, path: str | None = None) -> pd.DataFrame | None:
    """A pymushra JSON export (``to_json(orient="records")``: a list of flat objects with
    ``wm_*``/``questionaire_*``/``responses_*`` keys) as a string table, or None when ``data`` is
    not one."""
    if not isinstance(data, list) or not data or not all(isinstance(r, dict) for r in data):
        return None
    if not is_pymushra({k for r in data for k in r}):
        return None
    rows = [{k: ("" if v is None or (isinstance(v, float) and math.isnan(v)) else
                 json.dumps(v) if isinstance(v, (dict, list)) else str(v)) for k, v in r.items()} for r in data]
    return pd.DataFrame(rows).fillna("")


def scale_from_values(values: pd.Series, declared: str) -> tuple[str, str]:
    """The scale the numbers fit: ``declared`` unless every value is an integer in 1..5 (``acr5``)
    or 1..7 (``likert7``) and the declared scale is the 0-100 MUSHRA slider — then that category
    scale, with a note saying why. Non-numbers are left for validation to report."""
    v = pd.to_numeric(values, errors="coerce")
    if declared != "mushra" or v.isna().any() or len(v) == 0 or (v != v.round()).any():
        return declared, ""
    lo, hi = float(v.min()), float(v.max())
    for name, top in (("acr5", 5), ("likert7", 7)):
        if lo >= 1 and hi <= top:
            return name, (f"every rating is an integer between {lo:g} and {hi:g}: analysed on the "
                          f"{name} scale (1–{top}), not as MUSHRA 0–100 (BS.1534) — check that this "
                          "matches the test's rating scale")
    return declared, ""


# --- HEMVIP -----------------------------------------------------------------------------------

#: The answer a HEMVIP pairwise attention check asks for, from its stimulus name (left's score).
HEMVIP_ATTENTION_TARGETS = (("left_is_clearly_better", 2), ("left_is_slightly_better", 1),
                            ("they_are_equal", 0), ("right_is_slightly_better", -1),
                            ("right_is_clearly_better", -2))


def is_hemvip(data) -> bool:
    """True for a JSON list of sessions that each have ``trials`` lists (HEMVIP's export)."""
    return (isinstance(data, list) and bool(data) and all(isinstance(s, dict) for s in data)
            and all(isinstance(s.get("trials"), list) for s in data))


def _number(value):
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


# long: one pass over sessions, pages and responses; each page type's mapping is a few lines
def from_hemvip(data, path: str | None = None, text: str = "") -> pd.DataFrame:
    """HEMVIP's exported results (a JSON list of sessions) → long format.

    Args:
        data: the parsed JSON; path: the file; text: the JSON text (to name the line of a problem).

    participant = ``userId`` (else the session's ``_id``, else its position). ``video`` pages
    (rating sliders 0–100, GENEA 2020–2021): one row per response, item = page ``id``, system =
    ``stimulus``, score = ``score``, scale ``mushra``; ``videopc`` pages (GENEA 2022–2023): the two
    responses are one pairwise answer — system_a = the left video (first response), system_b =
    the right one, score = the left one's score (2 left clearly better … −2 right clearly better),
    side_shown ``left``, scale ``genea``. Attention checks are never ratings: a ``video`` response
    whose stimulus is ``at`` and a ``videopc`` page with a stimulus containing ``_att_`` are
    flagged ``check``; a ``videopc`` check whose answer differs from the one its stimulus name asks
    for (``..._Left_is_clearly_better``) is ``check_failed``. Pages without responses
    (instructions, audio test) are skipped; a page ``time`` in ms gives ``response_time_s``.
    """
    from reports.table import validate_ratings

    rows, lines, n_checks, skipped = [], [], 0, {}
    pos = 0
    for s_i, sess in enumerate(data):
        s_line, pos = _json_line(text, '"trials"', pos)
        who = str(sess.get("userId") or sess.get("_id") or f"session {s_i + 1}").strip()
        for t_i, trial in enumerate(sess["trials"]):
            if not isinstance(trial, dict):
                raise FileFormatError(path, s_line, f"session {s_i + 1} ({who}): trials[{t_i}] is "
                                                    f"{type(trial).__name__}, expected an object")
            t_line = s_line
            if text and "responses" in trial:
                t_line, pos = _json_line(text, '"responses"', pos + 1)
                t_line = t_line or s_line
            resp = trial.get("responses") or []
            ptype = str(trial.get("type") or "").strip().lower()
            page = str(trial.get("id") or f"page {t_i + 1}").strip()
            if not isinstance(resp, list) or not all(isinstance(r, dict) for r in resp):
                raise FileFormatError(path, t_line, f"session {s_i + 1} ({who}), page {page!r}: "
                                                    "'responses' must be a list of objects")
            if not resp:
                continue
            if ptype not in ("video", "videopc"):
                skipped[ptype or "(no type)"] = skipped.get(ptype or "(no type)", 0) + 1
                continue
            rt = _number(resp[0].get("time"))
            trial_id = f"{t_i + 1}:{page}"
            base = {"participant": who, "item": page, "response_time_s": rt / 1000.0 if rt is not None else np.nan}
            if ptype == "videopc":
                if len(resp) != 2:
                    raise FileFormatError(path, t_line, f"session {s_i + 1} ({who}), videopc page {page!r}: "
                                                        f"{len(resp)} responses, expected 2 (left and right)")
                left, right = (str(r.get("stimulus") or "").strip() for r in resp)
                score = _number(resp[0].get("score"))
                if score is None:
                    raise FileFormatError(path, t_line, f"session {s_i + 1} ({who}), videopc page {page!r}: "
                                                        f"score {resp[0].get('score')!r} is not a number")
                att = next((n for n in (left, right) if "_att_" in n.lower()), None)
                flags = ""
                if att is not None:
                    want = next((v for key, v in HEMVIP_ATTENTION_TARGETS if key in att.lower()), None)
                    flags = "check" if want is None or want == score else "check;check_failed"
                    n_checks += 1
                rows.append({**base, "trial": trial_id, "system_a": left, "system_b": right, "side_shown": "left",
                             "raw_answer": f"{score:g}", "score": score, "scale": "genea", "flags": flags})
                lines.append(t_line)
                continue
            for r_i, r in enumerate(resp):
                stim = str(r.get("stimulus") or "").strip()
                check = stim.lower() == "at"
                n_checks += check
                rows.append({**base, "trial": f"{trial_id}:{r_i + 1}" if check else trial_id,
                             "system_a": f"attention check {r_i + 1}" if check else stim, "system_b": "",
                             "side_shown": "", "raw_answer": str(r.get("score")), "score": r.get("score"),
                             "scale": "mushra", "flags": "check" if check else ""})
                lines.append(t_line)
    if not rows:
        found = ", ".join(f"{k} ({v})" for k, v in skipped.items()) or "none with responses"
        raise FileFormatError(path, None, f"HEMVIP export with no rating pages: page types found {found}; "
                                          "evalkit reads video (rating) and videopc (pairwise) pages")
    res = validate_ratings(pd.DataFrame(rows), path, lines=lines,
                           names={"participant": "userId", "item": "id", "system_a": "stimulus",
                                  "score": "score"})
    notes = [f"{n_checks} attention check(s) recognised (stimulus 'at' or '_att_' in its name) and used "
             "as checks, not as ratings"] if n_checks else []
    if skipped:
        notes.append("page(s) of type " + ", ".join(f"{k} ({v})" for k, v in skipped.items())
                     + " left out (evalkit reads video and videopc pages)")
    res.attrs["notes"] = notes
    return res
