"""Reading results back: the long-format ratings table, participants, live CMOS summaries.

The long format has exactly the columns of :data:`webtest.db.RATINGS_COLUMNS` (the contract of
``reports``): one row per answered non-training trial for comparison scales, one row per rated
stimulus (``system_b`` empty, ``score`` = the rating) for the absolute scale ``acr5``. ``flags``
is a ``;``-separated list: ``check`` plus ``check:gold`` / ``check:attention`` /
``check:repeat`` mark quality-check trials (never analysed as data); ``check_failed`` plus
``gold_fail`` / ``attention_fail`` / ``repeat_inconsistent`` mark failed checks; ``excluded``
marks every row of a participant excluded by the study's declared rules. Gold trials compare a
system with itself; their ``system_b`` reads ``"<system> (identical)"``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from typing import TYPE_CHECKING

from sqlalchemy import func, select, text

from webtest.db import RATINGS_COLUMNS, Database
from webtest.study import SETUP_STAGES
from webtest.tables import Cell, Event, Participant, SetupResult

if TYPE_CHECKING:  # pandas and scipy load on first use (server workers start faster)
    import pandas as pd


def ratings_long(db: Database, study_id: str | None = None) -> "pd.DataFrame":
    """The long-format ratings (``ratings_long`` view), ordered by participant and trial.

    Args:
        study_id: keep one study's rows when several studies share a database.
    """
    import pandas as pd

    cols = ", ".join(RATINGS_COLUMNS)
    if study_id is None:
        sql = text(f"SELECT {cols} FROM ratings_long ORDER BY participant, trial, system_a")
        params = {}
    else:
        sql = text(f"SELECT {cols} FROM wt_ratings_long_all WHERE study = :s ORDER BY participant, trial, system_a")
        params = {"s": study_id}
    with db.engine.connect() as conn:
        df = pd.read_sql(sql, conn, params=params)
    df = df.astype({"trial": "int64", "score": "float64", "response_time_s": "float64"})
    df["raw_answer"] = df["raw_answer"].astype(str)
    df["flags"] = df["flags"].fillna("").astype(str)
    return df[list(RATINGS_COLUMNS)]


def participants_table(db: Database, study_id: str) -> "pd.DataFrame":
    """One row per participant: status, stage, cell, progress, exclusion, demographics (JSON),
    the outcome of each setup stage (``setup_device``, ``setup_volume``, ``setup_headphones``:
    '' when not taken, see :func:`describe_setup`) and how many problems their trial pages
    reported (``load_problems``: stimuli that did not load, no WebGL)."""
    import pandas as pd

    with db.session() as s:
        parts = s.execute(select(Participant).where(Participant.study_id == study_id)
                          .order_by(Participant.created_at)).scalars().all()
        counts = dict(s.execute(text(
            "SELECT t.participant_id, COUNT(a.id) FROM wt_trials t LEFT JOIN wt_answers a ON a.trial_id = t.id "
            "JOIN wt_participants p ON p.id = t.participant_id WHERE p.study_id = :s GROUP BY t.participant_id"),
            {"s": study_id}).all())
        totals = dict(s.execute(text(
            "SELECT t.participant_id, COUNT(*) FROM wt_trials t JOIN wt_participants p ON p.id = t.participant_id "
            "WHERE p.study_id = :s GROUP BY t.participant_id"), {"s": study_id}).all())
        idx = dict(s.execute(select(Cell.id, Cell.idx).where(Cell.study_id == study_id)).all())
        setups: dict[str, dict[str, str]] = {}
        for r in s.execute(select(SetupResult).where(SetupResult.study_id == study_id)).scalars():
            setups.setdefault(r.participant_id, {})[r.stage] = describe_setup(r)
        problems = dict(s.execute(select(Event.participant_id, func.count()).where(Event.study_id == study_id)
                                  .group_by(Event.participant_id)).all())
    rows = [{
        "participant": p.id, "status": p.status, "stage": p.stage, "cell": idx.get(p.cell_id),
        "answered": int(counts.get(p.id, 0)), "trials": int(totals.get(p.id, 0)),
        "excluded": describe_exclusion(p.exclusion_reason or ""), "platform": p.platform,
        "platform_pid": p.ext_pid or "", "created_at": iso_time(p.created_at), "completed_at": iso_time(p.completed_at),
        "demographics": p.demographics_json,
        **{f"setup_{k}": setups.get(p.id, {}).get(k, "") for k in SETUP_STAGES},
        "load_problems": int(problems.get(p.id, 0)),
    } for p in parts]
    df = pd.DataFrame(rows, columns=["participant", "status", "stage", "cell", "answered", "trials", "excluded",
                                     "platform", "platform_pid", "created_at", "completed_at", "demographics",
                                     *(f"setup_{k}" for k in SETUP_STAGES), "load_problems"])
    # a participant who stopped before the consent has no cell: empty, not NaN, and the others
    # stay whole numbers (not 2.0)
    df["cell"] = df["cell"].astype("Int64")
    return df


def describe_setup(row) -> str:
    """A setup result in words: ``passed`` / ``failed``, with the headphone score
    (``passed (6/6 correct)``), the device's window and why it failed (``failed: touch only``),
    and the number of attempts when more than one."""
    detail = json.loads(row.detail_json or "{}")
    text_ = "passed" if row.passed else "failed"
    if row.stage == "headphones" and row.score is not None:
        text_ += f" ({row.score}/{len(detail.get('answers', []))} correct, {detail.get('pass', '?')} needed)"
    elif row.stage == "device" and "width" in detail:
        why = {"small": ": window too small", "touch_only": ": touch only", "unmeasured": ": not measured"}
        text_ += why.get(detail.get("verdict"), "") + f" ({detail['width']}×{detail.get('height', '?')} px)"
    elif row.stage == "volume" and not row.passed:
        text_ += ": cannot hear"
    if row.attempts > 1:
        text_ += f", {row.attempts} attempts"
    return text_


def iso_time(seconds: float | None) -> str:
    """POSIX seconds as ISO 8601 UTC to the second (``2026-05-01T12:34:56Z``); '' for none."""
    if seconds is None:
        return ""
    from datetime import datetime, timezone

    return datetime.fromtimestamp(float(seconds), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


_EXCLUSION_WORDS = {
    "gold_fail": ("identical-pair check failed", "identical-pair checks failed"),
    "attention_fail": ("attention check failed", "attention checks failed"),
    "repeat_inconsistent": ("repeated trial answered differently", "repeated trials answered differently"),
}


_SETUP_WORDS = {"device_fail": "device check failed", "volume_fail": "volume calibration failed",
                "headphones_fail": "headphone check failed"}


def describe_exclusion(reason: str) -> str:
    """The stored exclusion codes in plain words, e.g. ``attention_fail:1>0`` ->
    ``1 attention check failed (0 allowed)``; ``median_response_s<2`` -> ``median answer time
    under 2 s``; '' stays ''. Unknown codes are shown as they are."""
    out = []
    for code in filter(None, reason.split(";")):
        key, _, rest = code.partition(":")
        if key in _EXCLUSION_WORDS and ">" in rest:
            n, limit = rest.split(">", 1)
            one, many = _EXCLUSION_WORDS[key]
            out.append(f"{n} {one if n == '1' else many} ({limit} allowed)")
        elif key in _SETUP_WORDS:
            out.append(_SETUP_WORDS[key] + (f" ({rest.replace('<', ' correct, ').replace('_', ' ')} needed)"
                                            if key == "headphones_fail" and "<" in rest
                                            else f" ({rest.replace('_', ' ')})" if rest else ""))
        elif code.startswith("median_response_s<"):
            out.append(f"median answer time under {code.split('<', 1)[1]} s")
        else:
            out.append(code)
    return "; ".join(out)


def csv_text(df: "pd.DataFrame") -> str:
    """``df`` as CSV text that a spreadsheet opens as data: text cells starting with ``=``, ``+``,
    ``-``, ``@``, tab or CR get a leading ``'`` (:func:`evalkit.csvsafe.neutralise_frame`, the
    OWASP rule). Text columns holding only numbers (e.g. ``raw_answer`` ``-3``) are written as
    numbers first, so they are not changed."""
    import io

    import pandas as pd

    from evalkit.csvsafe import neutralise_frame

    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            values = out[col].dropna().astype(str)
            if len(values) and values.str.fullmatch(r"-?\d+(\.\d+)?").all():
                out[col] = pd.to_numeric(out[col])
    buf = io.StringIO()
    neutralise_frame(out).to_csv(buf, index=False)
    return buf.getvalue()


def cells_table(db: Database, study_id: str) -> "pd.DataFrame":
    """One row per design cell: status, holder, hand-outs, answers and flags so far."""
    import pandas as pd

    with db.session() as s:
        cells = s.execute(select(Cell).where(Cell.study_id == study_id).order_by(Cell.idx)).scalars().all()
        prog = {r[0]: (r[1], r[2], r[3]) for r in s.execute(text(
            "SELECT t.participant_id, COUNT(*), COUNT(a.id), "
            "SUM(CASE WHEN a.flags LIKE '%fail%' OR a.flags LIKE '%inconsistent%' THEN 1 ELSE 0 END) "
            "FROM wt_trials t LEFT JOIN wt_answers a ON a.trial_id = t.id "
            "JOIN wt_participants p ON p.id = t.participant_id WHERE p.study_id = :s GROUP BY t.participant_id"),
            {"s": study_id}).all()}
    rows = []
    for c in cells:
        total, answered, failed = prog.get(c.participant_id, (len(json.loads(c.trials_json)), 0, 0))
        rows.append({"cell": c.idx, "status": c.status, "participant": c.participant_id or "",
                     "handouts": c.generation, "answered": int(answered or 0), "trials": int(total or 0),
                     "failed_checks": int(failed or 0)})
    return pd.DataFrame(rows, columns=["cell", "status", "participant", "handouts", "answered", "trials", "failed_checks"])


def cmos_summary(ratings: "pd.DataFrame", confidence: float = 0.95) -> "pd.DataFrame":
    """Live CMOS per comparison: mean sign-corrected score with the reports' interval.

    Uses comparison-scale rows of main trials of non-excluded participants (no ``check`` or
    ``excluded`` flag). The interval is the one the reports give a CMOS by default
    (:func:`evalkit.stats.cmos_interval`: cluster-robust t over participants); NaN where it is
    undefined (fewer than two participants, or no spread), never zero width.

    Returns one row per (system_a, system_b): ``n``, ``participants``, ``cmos``, ``sd``,
    ``ci_low``, ``ci_high``, ``prefer_a``, ``same``, ``prefer_b`` (shares of ratings).
    """
    import pandas as pd

    from evalkit.stats import cmos_interval

    cols = ["system_a", "system_b", "n", "participants", "cmos", "sd", "ci_low", "ci_high", "prefer_a", "same", "prefer_b"]
    if ratings.empty:
        return pd.DataFrame(columns=cols)
    df = _analysed(ratings)
    df = df[df["system_b"] != ""]
    rows = []
    for (a, b), g in df.groupby(["system_a", "system_b"], sort=True):
        x = g["score"].to_numpy(dtype=float)
        ci = cmos_interval(x, g["participant"].to_numpy(), confidence)
        rows.append({"system_a": a, "system_b": b, "n": ci["n"], "participants": ci["n_participants"],
                     "cmos": ci["mean"], "sd": float(x.std(ddof=1)) if len(x) > 1 else float("nan"),
                     "ci_low": ci["cl_low"], "ci_high": ci["cl_high"],
                     "prefer_a": float((x > 0).mean()), "same": float((x == 0).mean()),
                     "prefer_b": float((x < 0).mean())})
    return pd.DataFrame(rows, columns=cols)


def _analysed(ratings: "pd.DataFrame") -> "pd.DataFrame":
    """Rows that are data: not a check trial, participant not excluded."""
    tokens = ratings["flags"].fillna("").astype(str).str.split(";")
    keep = tokens.map(lambda ts: not ({"check", "check_failed", "excluded"} & set(ts)))
    return ratings[keep.astype(bool)]


def mos_summary(ratings: "pd.DataFrame", confidence: float = 0.95) -> "pd.DataFrame":
    """Live mean opinion score per system for absolute-scale rows (``system_b`` empty): ``n``,
    ``participants``, ``mos``, ``sd``, ``ci_low``, ``ci_high`` (the cluster-robust t interval over
    participants of :func:`evalkit.stats.cluster_t_ci`, as the reports give; NaN where undefined)."""
    import pandas as pd

    from evalkit.stats import cluster_t_ci

    cols = ["system", "n", "participants", "mos", "sd", "ci_low", "ci_high"]
    df = _analysed(ratings) if not ratings.empty else ratings
    df = df[df["system_b"] == ""] if not df.empty else df
    rows = []
    for system, g in (df.groupby("system_a", sort=True) if not df.empty else []):
        x = g["score"].to_numpy(dtype=float)
        mean, lo, hi = cluster_t_ci(x, g["participant"].to_numpy(), confidence)
        rows.append({"system": system, "n": len(x), "participants": g["participant"].nunique(), "mos": mean,
                     "sd": float(x.std(ddof=1)) if len(x) > 1 else float("nan"), "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(rows, columns=cols)


def write_table(df: "pd.DataFrame", path: str | os.PathLike, fmt: str | None = None) -> Path:
    """Write ``df`` as CSV (spreadsheet-safe, see :func:`csv_text`) or JSON (records) through a
    temporary file renamed into place."""
    path = Path(path)
    fmt = fmt or ("json" if path.suffix.lower() == ".json" else "csv")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    os.close(fd)
    try:
        if fmt == "json":
            df.to_json(tmp, orient="records", indent=1)
        else:
            Path(tmp).write_text(csv_text(df), encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
