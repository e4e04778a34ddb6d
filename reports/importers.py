"""Importers: ratings files people already have, converted to the long-format table.

Formats (``fmt`` names):

``long``       the long-format ratings CSV (:mod:`reports.table`)
``genea``      GENEA leaderboard battles (``user,input_code,model_a,model_b,winner,is_strong,...``)
``webmushra``  webMUSHRA results: ``mushra.csv`` (MUSHRA pages) or ``paired_comparison.csv``
``webmushra-lss`` webMUSHRA ``lss.csv`` (likert_single_stimulus pages: ``stimuli_rating``,
               ``stimuli``; values stored with spaces, e.g. ``" 4 "``)
``mturk-p808`` raw Amazon MTurk batch results of a P.808 ACR HIT (``Batch_*_batch_results.csv``:
               ``WorkerId``, ``Answer.Q<n>`` votes and ``Answer.Q<n>_url`` clip URLs)
``p808``       ITU-T P.808 toolkit per-vote CSV (``..._votes_per_worker.csv``: ``workerid``,
               ``file``, ``vote`` and the condition columns of its ``condition_pattern``)
``mushra-lists`` one row per stimulus with JSON lists of ratings and participant ids
               (``signal,condition,ratings,participant_ids``), as in the Stahl et al. 2024
               speech-codec MUSHRA data set
``pymushra``   a pymushra server's export (CSV or JSON; :mod:`reports.importers_webmushra`)
``hemvip``     HEMVIP's exported results, JSON (:mod:`reports.importers_webmushra`)
``columns``    any other table or matrix whose columns the user names
               (:mod:`reports.importers_generic`)
``scores``     not ratings: an ``evalkit score`` table (one row per clip, ``system`` column)

:func:`load_input` detects the format from the header unless told (``columns`` is chosen when a
column spec is given); the separator is sniffed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.errors import FileFormatError, InputError
from reports.io import is_database_url, read_csv_table, read_ratings_db, separator_name
from reports.importers_webmushra import PYMUSHRA_SIGNATURE, from_pymushra, is_pymushra, scale_from_values
from reports.table import RATING_KEY, check_duplicates, validate_ratings

FORMATS = ("long", "genea", "webmushra", "webmushra-lss", "pymushra", "hemvip", "mturk-p808", "p808",
           "mushra-lists", "columns", "scores")
GENEA_COLUMNS = ("user", "input_code", "model_a", "model_b", "winner")


#: Signature columns of each format, as :func:`detect_format` checks them (first match wins).
SIGNATURES = (
    ("long", "long-format ratings", ("participant", "item", "system_a", "score", "scale")),
    ("genea", "GENEA battles", GENEA_COLUMNS),
    ("webmushra", "webMUSHRA MUSHRA", ("trial_id", "rating_stimulus", "rating_score")),
    ("webmushra", "webMUSHRA paired comparison",
     ("trial_id", "choice_reference", "choice_non_reference", "choice_answer")),
    ("webmushra-lss", "webMUSHRA single-stimulus rating (lss.csv)", ("trial_id", "stimuli_rating", "stimuli")),
    ("mturk-p808", "MTurk batch results of a P.808 ACR HIT",
     ("HITId", "WorkerId", "Answer.Q1", "Answer.Q1_url")),
    ("p808", "P.808 per-vote", ("workerid", "vote", "file")),
    ("p808", "P.808 per-vote", ("workerid", "vote", "short_file_name")),
    ("mushra-lists", "MUSHRA rating lists", ("signal", "condition", "ratings", "participant_ids")),
    ("pymushra", "pymushra export", PYMUSHRA_SIGNATURE + ("responses_<field>",)),
)


#: Columns an importer reads when present, beyond its signature (matched without regard to case).
OPTIONAL_COLUMNS = {
    "genea": ("is_strong", "juiceOptions", "juiceOtherReason"),
    "webmushra": ("session_uuid", "session_test_id", "rating_time", "choice_time"),
    "webmushra-lss": ("session_uuid", "session_test_id", "rating_time"),
    "p808": ("condition_name", "condition", "short_file_name", "file"),
}


def detect_format(columns, path: str | None = None) -> str:
    """The format name (one of :data:`FORMATS`) whose signature columns are all present.

    When none matches, the error names the columns missing for the closest format, and hints at
    the separator when the header looks like ``;``- or tab-separated values.
    """
    cols = {str(c).strip() for c in columns}
    lower_cols = {c.lower() for c in cols}
    if is_pymushra(cols):
        return "pymushra"
    for name, _, needed in SIGNATURES:
        if {c.lower() for c in needed} <= lower_cols:
            return name
    if mturk_questions(cols) and "workerid" in lower_cols:
        return "mturk-p808"
    if "system" in lower_cols:
        return "scores"
    _refuse_mturk_without_votes(cols, lower_cols, path)
    shown = sorted(_shown_name(c) for c in cols)
    header = (", ".join(shown[:6]) + (f", … ({len(shown)} columns)" if len(shown) > 6 else "")) or "no columns"
    for sep, label in ((";", "semicolons"), ("\t", "tabs")):
        if len(cols) == 1 and sep in next(iter(cols)):
            raise FileFormatError(path, 1, f"the header is one column ({header[:80]}) with {label} in it, "
                                           f"but the rows do not split into as many {label}-separated "
                                           "values as the header: expected the same number of values on "
                                           "every line (a stray separator or an unbalanced quote?)")
    ranked = sorted(((len(_sig_missing(sig, lower_cols)) / len(sig[2]), k, sig) for k, sig in enumerate(SIGNATURES)
                     if len(_sig_missing(sig, lower_cols)) < len(sig[2])), key=lambda t: t[:2])
    seen, close = set(), []
    for _, _, sig in ranked:
        if sig[0] not in seen and len(close) < 2:
            seen.add(sig[0])
            close.append(f"{sig[1]} (format {sig[0]}), which lacks column(s) {', '.join(_sig_missing(sig, lower_cols))}")
    if close:
        raise FileFormatError(path, 1, f"cannot tell the format from the header ({header}): closest is "
                                       + "; next ".join(close) + f"; {GENERIC_HINT}")
    raise FileFormatError(path, 1, f"cannot tell the format from the header ({header}): no format's columns "
                                   f"are there; expected {FORMAT_NEEDS}; {GENERIC_HINT}")


#: What each auto-detected format needs in its header, as refusals quote it.
FORMAT_NEEDS = ("long: participant, item, system_a, score, scale; genea: user, input_code, model_a, model_b, "
                "winner; webmushra: trial_id, rating_stimulus, rating_score (or choice_reference, "
                "choice_non_reference, choice_answer); webmushra-lss: trial_id, stimuli_rating, stimuli; "
                "pymushra: wm_id, wm_type, questionaire_uuid, responses_*; mturk-p808: WorkerId, Answer.Q<n>, "
                "Answer.Q<n>_url; p808: workerid, vote, file; mushra-lists: signal, condition, ratings, "
                "participant_ids; scores: system")
GENERIC_HINT = ("any other layout: name its columns, --columns participant=…,item=…,system=…,score=… "
                "(matrices: also --layout)")


def _sig_missing(sig, lower_cols) -> list[str]:
    """The signature columns of ``sig`` a header (lower-case names) lacks; ``responses_<field>``
    stands for any ``responses_*`` column."""
    out = []
    for c in sig[2]:
        if c == "responses_<field>":
            if not any(x.startswith("responses_") for x in lower_cols):
                out.append(c)
        elif c.lower() not in lower_cols:
            out.append(c)
    return out


def _refuse_mturk_without_votes(cols, lower_cols, path) -> None:
    """An MTurk batch (``HITId``, ``WorkerId``, ``Answer.*``) without ``Answer.Q<n>`` votes holds no
    ratings: refuse naming its answers (and a P.808 qualification HIT as such)."""
    answers = sorted(c for c in cols if c.lower().startswith("answer."))
    if not ({"hitid", "workerid"} <= lower_cols and answers):
        return
    shown = ", ".join(_shown_name(c) for c in answers[:5]) + (f", … ({len(answers)})" if len(answers) > 5 else "")
    qualification = any(re.match(r"answer\.(?:\d+_gender|num\d+|\d+_birth_year)$", c.lower()) for c in answers)
    what = ("a P.808 qualification HIT (its answers are the worker's background and hearing test)"
            if qualification else "an MTurk HIT without rating questions")
    raise FileFormatError(path, 1, f"MTurk batch results of {what}: answers {shown}; no Answer.Q<n> votes with "
                                   "Answer.Q<n>_url clips, so it holds no ratings — give the batch of the rating "
                                   "HIT (format mturk-p808) or the toolkit's per-vote output (format p808)")


#: A P.808 HIT question column: ``Answer.Q<n>`` (any case) or, in the HIT-app export, ``Q<n>``.
_MTURK_Q = re.compile(r"(?i)^(?:answer\.)?(q\d+)$")


def mturk_questions(columns) -> dict[str, tuple[str, str | None]]:
    """{question (``q1``, ``q2`` …): (vote column, clip-URL column or None)} of an MTurk batch
    header, matched without regard to case and with or without the ``Answer.`` prefix."""
    names = [str(c).strip() for c in columns]
    lower = {c.lower(): c for c in names}
    out = {}
    for c in names:
        m = _MTURK_Q.match(c)
        if m:
            q = m.group(1).lower()
            prefix = c[: len(c) - len(m.group(1))].lower()
            url = lower.get(f"{prefix}{q}_url")
            if q not in out or (out[q][1] is None and url is not None):
                out[q] = (c, url)
    return dict(sorted(out.items(), key=lambda kv: int(kv[0][1:])))


def _shown_name(name: str, limit: int = 40) -> str:
    """A column name as a one-line message quotes it: whitespace runs (newlines of a quoted
    header cell) as one space, at most ``limit`` characters."""
    one = " ".join(str(name).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def check_score_cells(df: pd.DataFrame, path: str | None = None) -> None:
    """A scores table's metric columns hold numbers: a column whose filled cells are at least half
    numbers but not all is an error naming the line, column and value (empty cells are missing)."""
    from reports.objective import ID_COLUMNS

    for col in df.columns:
        if str(col).lower() in ID_COLUMNS:
            continue
        raw = df[col]
        filled = raw.notna() & (raw.astype(str).str.strip() != "")
        values = pd.to_numeric(raw.where(filled), errors="coerce")
        bad = (filled & values.isna()).to_numpy()
        n_num = int((filled & values.notna()).sum())
        if bad.any() and n_num >= bad.sum():
            i = int(np.flatnonzero(bad)[0])
            raise FileFormatError(path, i + 2, f"column {str(col)!r}: expected a number, got "
                                               f"{raw.iloc[i]!r} (the column's other values are numbers)")


def _need(df: pd.DataFrame, cols, path, fmt) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise FileFormatError(path, 1, f"{fmt} file lacks column(s) {', '.join(missing)}")


def from_genea_battles(df: pd.DataFrame, path: str | None = None) -> pd.DataFrame:
    """GENEA leaderboard battles → long format (scale ``genea``, score in -2..2).

    ``winner`` is ``model_a``/``model_b``/``tie``; ``is_strong`` True/False/empty. A win is
    +-2 when strong, +-1 when not; a tie 0. A win with empty ``is_strong`` counts as weak and
    gets the flag ``strength_missing``. The battles file records no screen side.
    """
    _need(df, GENEA_COLUMNS, path, "GENEA battles")
    # Battles have no trial or time column: only an exact copy of a row is known to be a repeat.
    check_duplicates(df, list(df.columns), path, _csv_lines(df))
    winner = df["winner"].fillna("").astype(str).str.strip().str.lower()
    bad = ~winner.isin(["model_a", "model_b", "tie"])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FileFormatError(path, i + 2, f"column 'winner': expected model_a, model_b or tie, "
                                           f"got {df['winner'].iloc[i]!r}")
    strong_raw = df["is_strong"] if "is_strong" in df else pd.Series([""] * len(df))
    strong_txt = strong_raw.fillna("").astype(str).str.strip().str.lower()
    ok = strong_txt.isin(["true", "false", "1", "0", ""])
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise FileFormatError(path, i + 2, f"column 'is_strong': expected True, False or empty, "
                                           f"got {strong_raw.iloc[i]!r}")
    strong = strong_txt.isin(["true", "1"])
    magnitude = np.where(strong, 2.0, 1.0)
    sign = np.select([winner == "model_a", winner == "model_b"], [1.0, -1.0], 0.0)
    flags = np.where((winner != "tie") & (strong_txt == ""), "strength_missing", "")
    raw = winner + np.where(winner == "tie", "", np.where(strong, " strong", " weak"))
    out = pd.DataFrame({
        "participant": df["user"], "item": df["input_code"],
        "system_a": df["model_a"], "system_b": df["model_b"], "side_shown": "",
        "raw_answer": raw, "score": sign * magnitude, "scale": "genea",
        "response_time_s": np.nan, "flags": flags,
    })
    out["trial"] = out.groupby("participant", sort=False).cumcount() + 1
    res = validate_ratings(out, path, names={"participant": "user", "item": "input_code",
                                             "system_a": "model_a", "system_b": "model_b"})
    from reports.genea import battle_reasons

    reasons = battle_reasons(df)
    if reasons is not None:  # plain records: pandas compares attrs, which DataFrames cannot be
        res.attrs["genea_reasons"] = reasons.to_dict("records")
    return res


def _csv_lines(df: pd.DataFrame) -> list[int]:
    """Line of each row of a CSV read with one header line."""
    return [i + 2 for i in range(len(df))]


def _webmushra_participant(df: pd.DataFrame, first_data_col: str, path) -> pd.Series:
    if "session_uuid" in df.columns:
        return df["session_uuid"].astype(str)
    cols = list(df.columns)
    fields = cols[cols.index("session_test_id") + 1: cols.index(first_data_col)] \
        if "session_test_id" in cols else []
    if not fields:
        raise FileFormatError(path, 1, "webMUSHRA file has neither 'session_uuid' nor participant "
                                       "fields between 'session_test_id' and 'trial_id'; cannot "
                                       "tell participants apart")
    return df[fields].fillna("").astype(str).agg("|".join, axis=1)


def from_webmushra(df: pd.DataFrame, path: str | None = None) -> pd.DataFrame:
    """webMUSHRA ``mushra.csv`` (scale ``mushra``) or ``paired_comparison.csv`` (``pref3``).

    Participants are ``session_uuid`` when present, else the participant form fields joined.
    MUSHRA: item = ``trial_id``, system = ``rating_stimulus`` (webMUSHRA calls the hidden
    reference ``reference``), ``rating_time`` is milliseconds. Paired comparison pages are a
    discrimination task ("which one is the reference?"): system_a = the reference, system_b = the
    condition, score +1 when the reference was identified (``correct``: the condition is
    audibly/visibly different), -1 when the condition was taken for the reference, 0 for
    ``undecided``; ``unknown`` (no answer) rows are dropped.
    """
    if "rating_stimulus" not in df.columns and "choice_answer" not in df.columns:
        mushra = [c for c in ("trial_id", "rating_stimulus", "rating_score") if c not in df.columns]
        pc = [c for c in ("trial_id", "choice_reference", "choice_non_reference", "choice_answer")
              if c not in df.columns]
        raise FileFormatError(path, 1, f"not a webMUSHRA result file: a mushra.csv needs {', '.join(mushra)}, "
                                       f"a paired_comparison.csv {', '.join(pc)} (found {len(df.columns)} columns)")
    if "rating_stimulus" in df.columns:
        _need(df, ("trial_id", "rating_stimulus", "rating_score"), path, "webMUSHRA MUSHRA")
        score = df["rating_score"].fillna("").astype(str).str.strip()
        scale, note = scale_from_values(score, "mushra")
        out = pd.DataFrame({
            "participant": _webmushra_participant(df, "trial_id", path),
            "trial": df["trial_id"], "item": df["trial_id"], "system_a": df["rating_stimulus"],
            "system_b": "", "side_shown": "", "raw_answer": df["rating_score"],
            "score": score, "scale": scale,
            "response_time_s": pd.to_numeric(df.get("rating_time"), errors="coerce") / 1000.0,
            "flags": "",
        })
        res = validate_ratings(out, path, names={"trial": "trial_id", "item": "trial_id",
                                                 "system_a": "rating_stimulus",
                                                 "score": "rating_score"})
        res.attrs["notes"] = [note] if note else []
        return res
    _need(df, ("trial_id", "choice_reference", "choice_non_reference", "choice_answer"), path,
          "webMUSHRA paired comparison")
    ans = df["choice_answer"].fillna("").astype(str).str.strip().str.lower()
    bad = ~ans.isin(["correct", "incorrect", "undecided", "unknown"])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FileFormatError(path, i + 2, f"column 'choice_answer': expected correct, incorrect, "
                                           f"undecided or unknown, got {df['choice_answer'].iloc[i]!r}")
    keep = ans != "unknown"
    out = pd.DataFrame({
        "participant": _webmushra_participant(df, "trial_id", path),
        "trial": df["trial_id"], "item": df["trial_id"],
        "system_a": df["choice_reference"], "system_b": df["choice_non_reference"],
        "side_shown": "", "raw_answer": ans,
        "score": ans.map({"correct": 1.0, "incorrect": -1.0, "undecided": 0.0, "unknown": 0.0}),
        "scale": "pref3",
        "response_time_s": pd.to_numeric(df.get("choice_time"), errors="coerce") / 1000.0,
        "flags": "",
    })
    out = out[keep.to_numpy()]
    if out.empty:
        raise FileFormatError(path, None, "no answered paired comparisons (all 'unknown')")
    res = validate_ratings(out, path, lines=np.flatnonzero(keep.to_numpy()) + 2,
                           names={"trial": "trial_id", "item": "trial_id",
                                  "system_a": "choice_reference", "system_b": "choice_non_reference",
                                  "score": "choice_answer"})
    res.attrs["notes"] = [f"{int((~keep).sum())} unanswered ('unknown') paired comparison(s) dropped"] \
        if (~keep).any() else []
    return res


def from_webmushra_lss(df: pd.DataFrame, path: str | None = None) -> pd.DataFrame:
    """webMUSHRA ``lss.csv`` (likert_single_stimulus pages) → long format, absolute scale.

    Columns (webMUSHRA ``service/write.php``): ``session_test_id``, the participant form fields,
    ``trial_id``, ``stimuli_rating`` (written with spaces around the value, ``" 4 "``),
    ``stimuli`` (the stimulus id), ``rating_time`` (ms). system = ``stimuli``, item =
    ``trial_id``. The scale follows the values: 1–5 → ``acr5``, 1–7 → ``likert7``. Pages with
    several questions (``stimuli_rating1``, ``stimuli_rating2``, …) need one file per question.
    """
    many = [c for c in df.columns if str(c).startswith("stimuli_rating") and str(c) != "stimuli_rating"]
    if many and "stimuli_rating" not in df.columns:
        raise FileFormatError(path, 1, f"webMUSHRA lss file with {len(many)} rating columns "
                                       f"({', '.join(many)}); evalkit reads one rating per row — save one "
                                       "file per question with its column renamed to stimuli_rating")
    _need(df, ("trial_id", "stimuli_rating", "stimuli"), path, "webMUSHRA single-stimulus rating")
    score = df["stimuli_rating"].fillna("").astype(str).str.strip()
    v = pd.to_numeric(score, errors="coerce")
    hi = float(v.max()) if v.notna().any() else 5.0
    scale = "acr5" if hi <= 5 else "likert7"
    out = pd.DataFrame({
        "participant": _webmushra_participant(df, "trial_id", path),
        "trial": df["trial_id"], "item": df["trial_id"], "system_a": df["stimuli"], "system_b": "",
        "side_shown": "", "raw_answer": df["stimuli_rating"], "score": score, "scale": scale,
        "response_time_s": pd.to_numeric(df.get("rating_time"), errors="coerce") / 1000.0, "flags": "",
    })
    res = validate_ratings(out, path, names={"trial": "trial_id", "item": "trial_id",
                                             "system_a": "stimuli", "score": "stimuli_rating"})
    res.attrs["notes"] = [f"webMUSHRA single-stimulus ratings read on the {scale} scale (values "
                          f"{v.min():g}–{v.max():g})"]
    return res


def from_mturk_p808(df: pd.DataFrame, path: str | None = None, *, condition_pattern: str | None = None,
                    scale: str = "acr5") -> pd.DataFrame:
    """Raw MTurk batch results of a P.808 ACR HIT (``Batch_*_batch_results.csv``) → long format.

    One row per assignment with ``WorkerId`` and, per question n, the vote ``Answer.Q<n>`` and the
    clip ``Answer.Q<n>_url`` (the layout the P.808 toolkit's ACR template submits). One long row
    per answered question: participant = WorkerId, item = the clip file name, system = the
    condition taken from the clip name by ``condition_pattern`` (a regular expression whose first
    group is the condition, as ``condition_pattern`` in the toolkit's result-parser config),
    score = the vote (1–5). No quality control is applied here (the toolkit's result_parser
    applies its trapping/gold/variance rules): either screen with evalkit's rules or pass the
    toolkit's ``*_votes_per_worker.csv`` (format ``p808``) instead. CCR/DCR batches need the
    toolkit's order correction: pass its per-vote output.
    """
    cols = {str(c).lower(): c for c in df.columns}
    worker = cols.get("workerid")
    qs = mturk_questions(df.columns)
    if worker is None or not qs:
        lacking = [n for n, ok in (("WorkerId", worker is not None), ("Answer.Q<n> (or Q<n>)", bool(qs))) if not ok]
        raise FileFormatError(path, 1, f"MTurk batch file lacks column(s) {', '.join(lacking)} "
                                       f"(found {len(df.columns)} columns)")
    pairwise = sorted(c for c in cols if re.match(r"answer\.audio_n_finish_q_(?:a|b)?\d+$", c))
    if pairwise:
        raise FileFormatError(path, 1, f"an MTurk batch of a P.808 CCR/DCR HIT ({cols[pairwise[0]]}, … found): "
                                       "its raw votes need the toolkit's reference-order correction, which the "
                                       "batch does not record; pass the toolkit's *_votes_per_worker.csv "
                                       "(format p808) instead")
    if not condition_pattern:
        raise InputError(f"{path}: MTurk batch results of P.808 need --condition-pattern REGEX (its first "
                         "group picks the condition out of the clip name, as condition_pattern in the "
                         "P.808 result_parser config), or pass the P.808 toolkit's "
                         "*_votes_per_worker.csv (format p808) instead")
    try:
        pattern = re.compile(condition_pattern)
    except re.error as exc:
        raise InputError(f"--condition-pattern {condition_pattern!r}: not a regular expression ({exc})") from None
    rows, lines = [], []
    n_checks = {"trapping": 0, "gold": 0, "math": 0, "math_unknown": 0}
    for i, r in enumerate(df.to_dict("records")):
        checks = _p808_checks(r, cols)
        math_row = _p808_math_row(r, cols, r[worker], f"{r.get(cols.get('assignmentid', ''), i)}:MATH", scale)
        if math_row is not None:
            rows.append(math_row)
            lines.append(i + 2)
            n_checks["math"] += 1
            n_checks["math_unknown"] += math_row["flags"] == "check"
        for q, (vote_col, url_col) in qs.items():
            vote = str(r.get(vote_col, "") or "").strip()
            url = str(r.get(url_col, "") or "").strip() if url_col else ""
            if not vote or vote.lower() == "nan":
                continue
            if url_col is None:
                raise FileFormatError(path, 1, f"column {vote_col!r} has no clip column beside it "
                                               f"(expected {vote_col}_url)")
            clip = url.rsplit("/", 1)[-1]
            kind = next((k for k, (u, _) in checks.items() if u == url or u in url), None)
            if kind is not None:
                rows.append(_p808_check_row(kind, checks[kind][1], vote, clip, r[worker],
                                            f"{r.get(cols.get('assignmentid', ''), i)}:{q.upper()}",
                                            scale, path, i + 2, vote_col))
                lines.append(i + 2)
                n_checks[kind] += 1
                continue
            m = pattern.search(clip)
            if not m or not m.groups():
                raise FileFormatError(path, i + 2, f"column {url_col!r}: clip {clip!r} does not match "
                                                   f"--condition-pattern {condition_pattern!r} (needs one group)")
            rows.append({"participant": r[worker], "trial": f"{r.get(cols.get('assignmentid', ''), i)}:{q.upper()}",
                         "item": clip, "system_a": m.group(1), "raw_answer": vote, "score": vote,
                         "scale": scale})
            lines.append(i + 2)
    if not rows:
        raise FileFormatError(path, None, "no answered questions (all Answer.Q<n> cells empty)")
    out = pd.DataFrame(rows)
    res = validate_ratings(out, path, lines=lines, names={"participant": "WorkerId", "score": "Answer.Q<n>",
                                                          "system_a": "Answer.Q<n>_url"})
    res.attrs["notes"] = _mturk_notes(n_checks)
    return res


def _mturk_notes(n_checks: dict) -> list[str]:
    """The notes of an MTurk batch import: which checks were recognised and what was not applied."""
    notes = []
    if n_checks["trapping"] or n_checks["gold"]:
        notes.append(f"{n_checks['trapping']} trapping and {n_checks['gold']} gold question(s) recognised "
                     "(Input.TP, Input.gold_clips) and used as checks, not as ratings; a wrong answer "
                     "is a failed check for the rater")
    else:
        notes.append("no trapping or gold questions found (no Input.TP / Input.gold_clips columns)")
    if n_checks["math"]:
        notes.append(f"{n_checks['math']} maths question(s) (Input.math, Answer.math) used as checks, not as "
                     "ratings" + (f"; {n_checks['math_unknown']} without a known answer (no Input.math_ans, "
                                  "clip not math1/2/3.wav) count as passed" if n_checks["math_unknown"] else ""))
    notes.append("the P.808 toolkit's variance and audio-played rules are not applied; evalkit's "
                 "screening rules apply")
    return notes


def _p808_checks(row: dict, cols: dict) -> dict[str, tuple[str, str]]:
    """{``trapping``/``gold``: (clip URL, expected answer or "")} of one MTurk assignment, from the
    ``Input.TP``/``Input.TP_ans`` and ``Input.gold_clips``/``Input.gold_clips_ans`` cells (``cols``
    maps lower-case names to the file's)."""
    out = {}
    for kind, url_key, ans_key in (("trapping", "input.tp", "input.tp_ans"),
                                   ("gold", "input.gold_clips", "input.gold_clips_ans")):
        url_col, ans_col = cols.get(url_key), cols.get(ans_key)
        clip_url = str(row.get(url_col, "") or "").strip() if url_col else ""
        if clip_url and clip_url.lower() != "nan":
            out[kind] = (clip_url, str(row.get(ans_col, "") or "").strip() if ans_col else "")
    return out


#: Answers of the P.808 toolkit's own maths clips (its result-parser config's ``[math]`` section).
P808_MATH_ANSWERS = {"math1.wav": 3, "math2.wav": 7, "math3.wav": 6}


def _p808_math_row(row: dict, cols: dict, worker, trial, scale) -> dict | None:
    """The check row of an assignment's maths question (``Input.math`` clip, ``Answer.math`` typed
    sum), or None without one. Right as the toolkit judges it: the typed number (its digit sum when
    above 9, as when the digits heard were typed instead of their sum) equals ``Input.math_ans`` or,
    without it, the toolkit's answer for ``math1/2/3.wav``; with neither the check is counted, not
    failed. The row's score is the scale's lowest value: a placeholder, since check rows are never
    analysed (``raw_answer`` keeps what was typed)."""
    from reports.table import SCALES

    clip_col, ans_col = cols.get("input.math"), cols.get("answer.math")
    clip = str(row.get(clip_col, "") or "").strip() if clip_col else ""
    if not clip or clip.lower() == "nan" or ans_col is None:
        return None
    typed = str(row.get(ans_col, "") or "").strip()
    name = clip.rsplit("/", 1)[-1]
    want = str(row.get(cols.get("input.math_ans", ""), "") or "").strip()
    expected = float(want) if _num_or_none(want) is not None else P808_MATH_ANSWERS.get(name.lower())
    got = _num_or_none(typed)
    if got is not None and got > 9 and got == int(got):
        got = float(sum(int(d) for d in str(int(got))))
    ok = expected is None or (got is not None and got == expected)
    return {"participant": worker, "trial": trial, "item": name, "system_a": "p808 math",
            "raw_answer": typed, "score": SCALES[scale].low, "scale": scale,
            "flags": "check" if ok else "check;check_failed"}


def _num_or_none(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) else None


#: The P.808 toolkit's gold clips are rated at the top of the scale, within one category
#: (its ``gold_question`` config: ``correct_ans`` 5, ``variance`` 1) unless the batch gives the answer.
P808_GOLD_ANSWER, P808_GOLD_TOLERANCE = 5, 1


def _p808_check_row(kind, expected, vote, clip, worker, trial, scale, path, line, column) -> dict:
    """One long row for a trapping or gold question: flagged ``check`` (``check_failed`` when the
    vote misses the expected answer: trapping exactly ``Input.TP_ans``, gold within
    :data:`P808_GOLD_TOLERANCE` of ``Input.gold_clips_ans`` or :data:`P808_GOLD_ANSWER`)."""
    try:
        v = float(vote)
    except ValueError:
        raise FileFormatError(path, line, f"column {column!r}: expected a vote (a number), got {vote!r}") from None
    if kind == "trapping":
        try:
            want = float(expected)
        except ValueError:
            raise FileFormatError(path, line, f"column 'Input.TP_ans': expected the trapping clip's answer "
                                              f"(a number), got {expected!r}") from None
        ok = v == want
    else:
        try:
            want = float(expected) if expected and expected.lower() != "nan" else P808_GOLD_ANSWER
        except ValueError:
            raise FileFormatError(path, line, f"column 'Input.gold_clips_ans': expected a number, "
                                              f"got {expected!r}") from None
        ok = abs(v - want) <= P808_GOLD_TOLERANCE
    return {"participant": worker, "trial": trial, "item": clip, "system_a": f"p808 {kind}",
            "raw_answer": vote, "score": vote, "scale": scale,
            "flags": "check" if ok else "check;check_failed"}


def from_p808(df: pd.DataFrame, path: str | None = None, *, condition_column: str | None = None,
              item_column: str | None = None, reference: str = "reference",
              scale: str = "ccr7") -> pd.DataFrame:
    """ITU-T P.808 per-vote CSV → long format.

    ``scale='ccr7'`` (default): each vote (-3..3) compares the processed clip of a condition with
    its reference; system_a = the condition, system_b = ``reference``, positive = the processed
    clip better (votes as the P.808 parser writes them, order already corrected).
    ``scale='acr5'``: absolute 1-5 votes of the condition. The condition comes from
    ``condition_column`` (default: ``condition_name``, then ``condition``), the item from
    ``item_column`` (default: ``short_file_name``, else the basename of ``file``).
    """
    _need(df, ("workerid", "vote"), path, "P.808 per-vote")
    cond_col = condition_column or next((c for c in ("condition_name", "condition") if c in df), None)
    if cond_col is None or cond_col not in df:
        raise FileFormatError(path, 1, "P.808 file has no condition column (looked for "
                                       f"{condition_column or 'condition_name, condition'}); "
                                       "pass the column that holds the condition")
    if item_column:
        _need(df, (item_column,), path, "P.808 per-vote")
        item = df[item_column]
    elif "short_file_name" in df:
        item = df["short_file_name"]
    elif "file" in df:
        item = df["file"].fillna("").astype(str).str.rsplit("/", n=1).str[-1]
    else:
        raise FileFormatError(path, 1, "P.808 file has neither 'short_file_name' nor 'file'")
    # Per-vote files have no trial column: only an exact copy of a row is known to be a repeat.
    check_duplicates(df, list(df.columns), path, _csv_lines(df))
    pairwise = scale in ("ccr7", "cmos7")
    out = pd.DataFrame({
        "participant": df["workerid"], "item": item, "system_a": df[cond_col],
        "system_b": reference if pairwise else "", "side_shown": "",
        "raw_answer": df["vote"], "score": df["vote"], "scale": scale,
        "response_time_s": np.nan, "flags": "",
    })
    out["trial"] = out.groupby("participant", sort=False).cumcount() + 1
    return validate_ratings(out, path, names={"participant": "workerid", "system_a": cond_col,
                                              "score": "vote"})


def from_mushra_lists(df: pd.DataFrame, path: str | None = None) -> pd.DataFrame:
    """One row per (signal, condition) with JSON lists ``ratings`` and ``participant_ids``.

    Each list pair is expanded to one long row per participant: item = ``signal``, system =
    ``condition``, scale ``mushra``. The lists of a row must have the same length.
    """
    _need(df, ("signal", "condition", "ratings", "participant_ids"), path, "MUSHRA rating lists")
    rows, lines = [], []
    for i, r in enumerate(df.itertuples(index=False)):
        try:
            ratings = json.loads(r.ratings)
            pids = json.loads(r.participant_ids)
        except (TypeError, json.JSONDecodeError) as exc:
            raise FileFormatError(path, i + 2, f"columns 'ratings'/'participant_ids': expected JSON "
                                               f"lists of numbers ({exc})") from None
        if not isinstance(ratings, list) or not isinstance(pids, list) or len(ratings) != len(pids):
            raise FileFormatError(path, i + 2, "columns 'ratings' and 'participant_ids' must be "
                                               "JSON lists of the same length")
        for p, v in zip(pids, ratings):
            rows.append((str(p), r.signal, r.condition, v))
            lines.append(i + 2)
    out = pd.DataFrame(rows, columns=["participant", "item", "system_a", "score"])
    out["raw_answer"] = out["score"].astype(str)
    out["scale"] = "mushra"
    out["trial"] = out["item"]
    # Errors in the expanded table name the source row the rating came from.
    return validate_ratings(out, path, lines=lines,
                            names={"participant": "participant_ids", "item": "signal",
                                   "trial": "signal", "system_a": "condition", "score": "ratings"})


IMPORTERS = {
    "genea": from_genea_battles,
    "webmushra": from_webmushra,
    "webmushra-lss": from_webmushra_lss,
    "mturk-p808": from_mturk_p808,
    "p808": from_p808,
    "mushra-lists": from_mushra_lists,
    "pymushra": from_pymushra,
}


def load_input(source: str | Path, fmt: str = "auto", *, table: str = "ratings_long",
               **options) -> tuple[str, pd.DataFrame]:
    """Read one input: a database URL, a delimited text file (any separator, sniffed) in any of
    :data:`FORMATS`, or a JSON export (HEMVIP, pymushra).

    Returns ``(kind, frame)``: kind ``"ratings"`` with a validated long-format table, or
    ``"scores"`` with the raw objective scores table. ``options`` go to the importer
    (e.g. ``condition_column`` for P.808, ``drop_trials`` for webMUSHRA/pymushra pages, ``spec``
    — a :class:`reports.importers_generic.TableSpec` — for format ``columns``).
    """
    text = str(source)
    if is_database_url(text):
        df = read_ratings_db(text, table=table)
        df.attrs.update(source=_safe_url(text), format="database")
        return "ratings", df
    if fmt not in FORMATS and fmt != "auto":
        raise InputError(f"unknown input format {fmt!r}; expected auto or one of {', '.join(FORMATS)}")
    if fmt == "columns" or (fmt == "auto" and options.get("spec") is not None):
        from reports.importers_generic import from_table_spec

        df = from_table_spec(source, options.get("spec"))
        df.attrs.update(source=text, format="columns")
        return "ratings", df
    if fmt in ("auto", "hemvip", "pymushra") and _looks_like_json(source):
        return "ratings", _load_json(source, fmt, options)
    raw = read_csv_table(source)
    sep_note = (f"read as values separated by {separator_name(raw.attrs['separator'])}"
                if raw.attrs.get("separator", ",") != "," else None)
    forced = fmt != "auto"
    if fmt == "auto":
        fmt = detect_format(raw.columns, text)
    raw.columns = [str(c).strip() for c in raw.columns]
    if raw.empty:
        raise FileFormatError(text, 2, f"a header ({len(raw.columns)} columns) but no rows; expected "
                                       "one row per rating below the header")
    raw = _canonical_case(raw, fmt)
    if fmt == "scores":
        if "system" not in raw.columns:
            raise FileFormatError(text, 1, "a scores table needs a 'system' column")
        check_score_cells(raw, text)
        raw.attrs.update(source=text, format="scores")
        return "scores", raw
    try:
        df = _import_table(raw, fmt, text, options)
    except FileFormatError as exc:
        if forced and exc.line == 1:
            raise FileFormatError(text, 1, exc.reason + _other_format_hint(raw.columns, fmt)) from None
        raise
    if sep_note:
        df.attrs["notes"] = [sep_note] + list(df.attrs.get("notes") or [])
    df.attrs.update(source=text, format=fmt)
    return "ratings", df


def _import_table(raw: pd.DataFrame, fmt: str, text: str, options: dict) -> pd.DataFrame:
    """The long table of a delimited file already read, in format ``fmt`` (not ``scores``)."""
    if fmt == "long":
        df = validate_ratings(raw, text)
        if "data" in raw.columns and raw["data"].astype(str).str.strip().str.lower().eq("simulated").any():
            from reports.simulate import SIMULATED_NOTE

            # a ratings_analysed.csv of a report on simulated ratings stays marked when re-read
            df.attrs.update(simulated=True, notes=[SIMULATED_NOTE])
        return df
    if fmt == "hemvip":
        raise FileFormatError(text, 1, "a HEMVIP export is a JSON file (a list of sessions with 'trials'); "
                                       "this file is delimited text")
    drop_note = None
    if fmt in ("webmushra", "webmushra-lss", "pymushra"):
        page_col = "trial_id" if fmt != "pymushra" else next(
            (c for c in raw.columns if c.lower() == "wm_id"), "wm_id")
        raw, drop_note = drop_trials(raw, options.get("drop_trials") or (), text, column=page_col)
    fn = IMPORTERS[fmt]
    if fmt == "p808":
        df = fn(raw, text, **{k: v for k, v in options.items() if k in ("condition_column", "scale")})
    elif fmt == "mturk-p808":
        df = fn(raw, text, condition_pattern=options.get("condition_pattern"))
    elif fmt == "pymushra":
        df = fn(raw, text, lines=np.asarray(raw.attrs.get("lines", np.arange(len(raw)) + 2)))
    else:
        df = fn(raw, text)
    if drop_note:
        df.attrs["notes"] = [drop_note] + list(df.attrs.get("notes") or [])
    return df


def _other_format_hint(columns, fmt: str) -> str:
    """``"; the header is that of format X (…): use --format X or auto"`` when a header refused as
    ``fmt`` matches another format, else ``""``."""
    try:
        other = detect_format(columns)
    except FileFormatError:
        return ""
    if other == fmt:
        return ""
    label = next((sig[1] for sig in SIGNATURES if sig[0] == other), "an objective scores table")
    return f"; the header is that of {label}: use --format {other} (or auto)"


def _looks_like_json(source) -> bool:
    """Whether a file's first non-blank character opens a JSON array or object."""
    try:
        with open(source, "rb") as fh:
            head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head[:1] in (b"[", b"{")


def _load_json(source, fmt: str, options: dict) -> pd.DataFrame:
    """A HEMVIP or pymushra JSON export as a validated long table."""
    from evalkit.textfile import read_utf8_text
    from reports.importers_webmushra import from_hemvip, is_hemvip, pymushra_json_records

    path = str(source)
    body = read_utf8_text(source)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise FileFormatError(path, exc.lineno, f"not valid JSON ({exc.msg}, column {exc.colno}); expected "
                                                "a HEMVIP export (a list of sessions) or a pymushra JSON "
                                                "export (a list of records)") from None
    except RecursionError:
        raise FileFormatError(path, None, "JSON nested too deeply to be a ratings export") from None
    records = pymushra_json_records(data, path) if fmt in ("auto", "pymushra") else None
    if records is not None:
        records.attrs["lines"] = [_record_line(body, i) for i in range(len(records))]
        df = _import_table(records, "pymushra", path, options)
        df.attrs.update(source=path, format="pymushra")
        return df
    if fmt in ("auto", "hemvip") and is_hemvip(data):
        df = from_hemvip(data, path, body)
        df.attrs.update(source=path, format="hemvip")
        return df
    shape = (f"a list of {len(data)} {type(data[0]).__name__ if data else 'item'}(s)"
             if isinstance(data, list) else f"an object with keys {', '.join(list(map(str, data))[:6]) or '(none)'}"
             if isinstance(data, dict) else f"a {type(data).__name__}")
    raise FileFormatError(path, 1, f"JSON file holding {shape}: expected a HEMVIP export (a list of sessions, "
                                   "each with a 'trials' list) or a pymushra JSON export (a list of records "
                                   "with wm_id, wm_type, questionaire_uuid and responses_* keys)")


def _record_line(body: str, i: int) -> int:
    """Line of the ``i``-th top-level object of a JSON array (approximate: counts ``{`` at depth 1)."""
    depth, count, line, in_str, esc = 0, -1, 1, False, False
    for ch in body:
        if ch == "\n":
            line += 1
        if in_str:
            esc, in_str = (False, in_str) if esc else (ch == "\\", ch != '"')
            continue
        if ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if ch == "{" and depth == 2:
                count += 1
                if count == i:
                    return line
        elif ch in "]}":
            depth -= 1
    return line


#: A webMUSHRA page id that names a training/introduction page.
_TRAINING = re.compile(r"(?i)(?:^|[^a-z])(?:train|practi[cs]e|intro|familiari[sz])")


def drop_trials(raw: pd.DataFrame, trials, path: str | None = None, *,
                column: str = "trial_id") -> tuple[pd.DataFrame, str | None]:
    """A webMUSHRA table without the rows of the pages (``column``, webMUSHRA's ``trial_id`` or
    pymushra's ``wm_id``) in ``trials``, and a note
    saying how many rows were left out. A listed page that is not in the file is an error naming the
    pages it has; with nothing listed, pages whose id reads as training get a note saying how to
    leave them out (they are kept: only the user knows what a page was)."""
    if column not in raw.columns:
        return raw, None
    ids = raw[column].fillna("").astype(str).str.strip()
    present = list(dict.fromkeys(ids))
    wanted = [str(t).strip() for t in trials if str(t).strip()]
    if not wanted:
        looks = [t for t in present if _TRAINING.search(t)]
        if looks:
            return raw, (f"page(s) {', '.join(looks)} look like training pages and were analysed as "
                         "items; leave them out with --drop-trials " + ",".join(looks))
        return raw, None
    missing = [t for t in wanted if t not in present]
    if missing:
        raise FileFormatError(path, None, f"--drop-trials: no page {', '.join(map(repr, missing))} in "
                                          f"column {column!r} (its pages: {', '.join(present[:12])}"
                                          f"{', …' if len(present) > 12 else ''})")
    drop = ids.isin(wanted)
    if drop.all():
        raise FileFormatError(path, None, "--drop-trials leaves no rows: every page of the file is listed")
    note = (f"{int(drop.sum())} row(s) of page(s) {', '.join(wanted)} left out (--drop-trials)")
    lines = np.asarray(raw.attrs.get("lines", np.arange(len(raw)) + raw.attrs.get("first_line", 2)))
    kept = raw[~drop.to_numpy()].reset_index(drop=True)
    kept.attrs["lines"] = list(lines[~drop.to_numpy()])
    return kept, note


def _canonical_case(raw: pd.DataFrame, fmt: str) -> pd.DataFrame:
    """Signature columns of ``fmt`` spelt in another case (``USER``, ``Vote``) renamed to the
    spelling the importer reads; a column already spelt that way is left alone."""
    wanted = {c.lower(): c for name, _, needed in SIGNATURES if name == fmt for c in needed}
    wanted.update({c.lower(): c for c in OPTIONAL_COLUMNS.get(fmt, ())})
    present = set(raw.columns)
    ren = {c: wanted[c.lower()] for c in raw.columns
           if c.lower() in wanted and c != wanted[c.lower()] and wanted[c.lower()] not in present}
    return raw.rename(columns=ren) if ren else raw


def _safe_url(url: str) -> str:
    try:
        import sqlalchemy as sa

        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - only used for display
        return url.split("@")[-1]


def combine_ratings(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate several validated tables; participants keep their ids (same id = same person)."""
    if not frames:
        raise InputError("no ratings given")
    out = pd.concat(frames, ignore_index=True)
    if len(frames) > 1:
        src = np.concatenate([[k] * len(f) for k, f in enumerate(frames)])
        key = out[list(RATING_KEY)].astype(str)
        dup = key.duplicated(keep="first").to_numpy()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            j = int(np.flatnonzero((key == key.iloc[i]).all(axis=1).to_numpy())[0])
            name = [f.attrs.get("source", f"table {k + 1}") for k, f in enumerate(frames)]
            shown = ", ".join(f"{c}={key.iloc[i][c]!r}" for c in RATING_KEY)
            raise InputError(f"duplicate rating: {shown} is in both {name[src[j]]} and "
                             f"{name[src[i]]}; each answer must be given once (the same file twice?)")
    notes = [n for f in frames for n in f.attrs.get("notes", [])]
    out.attrs["notes"] = notes
    reasons = [r for f in frames for r in f.attrs.get("genea_reasons") or []]
    if reasons:
        out.attrs["genea_reasons"] = reasons
    out.attrs["sources"] = [f.attrs.get("source", "<table>") for f in frames]
    return out
