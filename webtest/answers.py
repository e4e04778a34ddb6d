"""Recording answers: validation, timing check, sign correction, check flags, exclusion rules.

:func:`parse_submission` validates a submitted body on its own (the same answer is invalid
whatever the state of the trial); :func:`store_answer` then stores it and commits before it
returns, so the caller acknowledges only a stored answer. Storing is idempotent on
(participant, trial): a second submission of an answered trial returns the stored answer
unchanged (first answer wins), also when two arrive at once. :func:`record_answer` does both.

One answer is one transaction of three statements in the usual case (read the participant's
state with the trials around the answered one, insert the answer, update the cell's activity;
the participant's row is updated too when their status or exclusion reason changes): the exclusion rules are updated incrementally (the participant's answers are read
again only when this answer failed a check, or at completion for a response-time rule).
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.exc import IntegrityError

from evalkit.errors import InputError
from webtest.scales import Scale, signed_score
from webtest.setup import SETUP_CODES
from webtest.study import Exclusion
from webtest.trials import A, C, P, T, first_unanswered, trials_around

MAX_EVENTS = 500

# Statements of the answer transaction, built once (bound parameters; compiled form reused).
_INSERT = A.insert()
_CELL = (update(C).where(C.c.id == bindparam("cid"), C.c.participant_id == bindparam("pid"), C.c.status == "assigned")
         .values(last_seen_at=bindparam("now"), status=bindparam("cell_status"), participant_id=bindparam("holder")))
_PERSON = (update(P).where(P.c.id == bindparam("pid"))
           .values(last_seen_at=bindparam("now"), exclusion_reason=bindparam("reason"), status=bindparam("status"),
                   stage=bindparam("stage"), completed_at=bindparam("completed_at")))
_REF_SCORE = select(A.c.score).join(T, T.c.id == A.c.trial_id).where(
    T.c.participant_id == bindparam("pid"), T.c.position == bindparam("pos"))
_FAILED_FLAGS = select(A.c.flags, A.c.response_time_s, A.c.scale).where(
    A.c.participant_id == bindparam("pid"), A.c.flags.like("%check_failed%"))
_ALL_TIMES = select(A.c.flags, A.c.response_time_s, T.c.kind).join(T, T.c.id == A.c.trial_id).where(
    A.c.participant_id == bindparam("pid"))
_STATUS = select(P.c.status).where(P.c.id == bindparam("pid"))
# PostgreSQL: the insert and the cell's update in one statement (see _insert_with_cell).
_ANSWER_AND_CELL = select(func.count()).select_from(_CELL.returning(C.c.id).cte("upd")).add_cte(
    A.insert().values({c.name: bindparam(f"a_{c.name}") for c in A.c if c.name != "id"}).returning(A.c.id).cte("ins"))


@dataclass(frozen=True)
class AnswerOutcome:
    """What happened to a submitted answer.

    status: ``stored`` (new), ``duplicate`` (already stored; the stored one is kept),
    ``too_fast`` (rejected: sooner than the stimuli could have played), ``not_shown`` (the trial
    was never displayed), ``out_of_order`` (an earlier trial is unanswered), ``not_found``,
    ``expired`` (the participant's cell was given to someone else; nothing stored).
    """

    status: Literal["stored", "duplicate", "too_fast", "not_shown", "out_of_order", "not_found", "expired"]
    position: int
    next_position: int | None = None
    completed: bool = False
    screened_out: bool = False
    wait_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status in ("stored", "duplicate")


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of the range of a number")
    return value


def strict_json(text: str | bytes):
    """Parse JSON as the standard defines it: ``NaN``, ``Infinity`` and numbers that overflow
    to infinity (``1e400``) are errors, so nothing stored can become non-standard JSON.

    Raises:
        ValueError: the text is not valid JSON (the message says where).
    """
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:  # e.g. "[" x 30,000: Python's parser gives up before the size limit
        raise ValueError("nested too deeply (arrays or objects inside each other thousands of times)") from None


def clean_events(events) -> str:
    """Play/pause/seek/ended events as compact JSON (at most :data:`MAX_EVENTS`)."""
    if events is None:
        return "[]"
    if isinstance(events, str):
        try:
            events = strict_json(events) if events else []
        except ValueError as exc:
            raise InputError(f"events must be a JSON list ({exc})") from None
    if not isinstance(events, list):
        raise InputError("events must be a list")
    out = []
    for i, e in enumerate(events[:MAX_EVENTS]):
        if not isinstance(e, dict):
            continue
        kept = {k: e[k] for k in ("side", "type", "t", "pos") if k in e and isinstance(e[k], (str, int, float))}
        for k, v in kept.items():
            if isinstance(v, float) and not math.isfinite(v):
                raise InputError(f"events[{i}].{k} must be a finite number, got {v!r}")
        out.append(kept)
    return json.dumps(out, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class Submission:
    """A validated answer body: the answer as text and value, client timing, cleaned events."""

    raw_answer: str
    raw_value: float
    client_time_s: float | None
    events_json: str


def parse_submission(raw, scale: Scale, client_time_s=None, events=None) -> Submission:
    """Validate a submitted answer, its ``client_time_s`` and ``events``.

    Raises :class:`InputError` for an answer that is not on the scale, a ``client_time_s``
    that is not a finite number, or malformed events.
    """
    raw_text, raw_value = scale.parse(raw)
    events_json = clean_events(events)
    if client_time_s is not None:
        try:
            value = float(client_time_s)
        except (TypeError, ValueError, OverflowError):
            value = None
        if isinstance(client_time_s, bool) or value is None or not math.isfinite(value):
            raise InputError(f"client_time_s must be a finite number of seconds, got {client_time_s!r}")
        client_time_s = value
    return Submission(raw_text, raw_value, client_time_s, events_json)


def check_flags(db, trial, participant_id: str, raw_answer: str, raw_value: float, score: float,
                scale: Scale, reference: dict | None = None) -> list[str]:
    """Flags of an answer to a check trial: ``check`` and ``check:<kind>``, plus ``check_failed``
    and ``<kind>_fail`` / ``repeat_inconsistent`` when it failed (the generic tokens are the
    ones ``reports`` screens on). A repeat trial's reference answer is taken from ``reference``
    (rows by position with ``score``, e.g. from :func:`webtest.trials.trials_around`) or read."""
    if trial.kind in ("main", "training"):
        return []
    flags = ["check", f"check:{trial.kind}"]
    tol = trial.tolerance or 0.0
    if trial.kind == "gold" and abs(score) > tol + 1e-9:
        flags.append("gold_fail")
    elif trial.kind == "attention":
        if scale.kind == "absolute":
            ok = all(int(v) == int(trial.expected) for v in raw_answer.split("|"))
        else:
            ok = abs(raw_value - float(trial.expected)) < 1e-9
        if not ok:
            flags.append("attention_fail")
    elif trial.kind == "repeat" and trial.ref_position is not None:
        ref = (reference or {}).get(trial.ref_position)
        ref_score = ref.score if ref is not None else db.execute(
            _REF_SCORE, {"pid": participant_id, "pos": trial.ref_position}).scalar_one_or_none()
        if ref_score is not None and abs(score - ref_score) > tol + 1e-9:
            flags.append("repeat_inconsistent")
    if len(flags) > 2:
        flags.insert(2, "check_failed")
    return flags


_COUNTED = ("gold_fail", "attention_fail", "repeat_inconsistent")
_MEDIAN = "median_response_s<"


def _limits(rules: Exclusion) -> dict[str, int | None]:
    return {"gold_fail": rules.max_gold_failures, "attention_fail": rules.max_attention_failures,
            "repeat_inconsistent": rules.max_repeat_inconsistencies}


def exclusion_reason(db, participant_id: str, rules: Exclusion, completed: bool, previous: str = "",
                     new_flags: tuple[str, ...] | None = None) -> str:
    """Which declared exclusion rules the participant's answers so far break ('' if none).

    Incremental: with ``new_flags`` (the flags of the answer just stored) the failure counts are
    re-read only if that answer failed a limited check, otherwise ``previous`` (the stored
    reason) stands; without ``new_flags`` everything is recomputed. The response-time rule is
    checked at completion (one read of the response times).
    """
    limits = _limits(rules)
    tokens = [t for t in previous.split(";") if t and not t.startswith(_MEDIAN)]
    kept = [t for t in tokens if t.split(":", 1)[0] in SETUP_CODES]  # failed setup checks stay
    recount = new_flags is None or any(f in new_flags and limits[f] is not None for f in _COUNTED)
    median = completed and rules.min_median_response_s is not None
    if median:  # one read serves both rules
        rows = db.execute(_ALL_TIMES, {"pid": participant_id}).all()
    elif recount:
        rows = db.execute(_FAILED_FLAGS, {"pid": participant_id}).all()
    else:
        return ";".join(tokens)
    if recount:
        counts = dict.fromkeys(_COUNTED, 0)
        for flags, _, _ in rows:
            for f in flags.split(";"):
                if f in counts:
                    counts[f] += 1
        tokens = kept + [f"{k}:{counts[k]}>{limit}" for k, limit in limits.items()
                         if limit is not None and counts[k] > limit]
    if median:
        times = [rt for _, rt, kind in rows if kind != "training"]
        if times and statistics.median(times) < rules.min_median_response_s:
            tokens.append(f"{_MEDIAN}{rules.min_median_response_s:g}")
    return ";".join(tokens)


def record_answer(db, participant, position: int, raw, scale: Scale, rules: Exclusion, now: float,
                  client_time_s: float | None = None, events=None, served_at: float | None = None) -> AnswerOutcome:
    """Validate (:func:`parse_submission`) and store (:func:`store_answer`) an answer.

    Raises :class:`InputError` for an invalid submission, whatever the state of the trial.
    """
    sub = parse_submission(raw, scale, client_time_s=client_time_s, events=events)
    return store_answer(db, participant, position, sub, scale, rules, now, served_at=served_at)


def _refusal(db, participant_id: str, position: int, trials: dict, served_at: float | None,
             now: float) -> AnswerOutcome | None:
    """Why the answer to ``position`` cannot be stored now (``None``: it can)."""
    trial = trials.get(position)
    if trial is None:
        return AnswerOutcome("not_found", position)
    if trial.answer_id is not None:
        return _after(db, participant_id, position, "duplicate")
    before = trials.get(position - 1)
    if before is not None and before.answer_id is None:
        return AnswerOutcome("out_of_order", position, next_position=first_unanswered(db, participant_id))
    if served_at is None:
        return AnswerOutcome("not_shown", position, next_position=position)
    elapsed = now - served_at
    if elapsed + 1e-6 < trial.required_s:
        return AnswerOutcome("too_fast", position, next_position=position, wait_s=trial.required_s - elapsed)
    return None


def store_answer(db, participant, position: int, sub: Submission, scale: Scale, rules: Exclusion,
                 now: float, served_at: float | None = None, trials: dict | None = None) -> AnswerOutcome:
    """Store the validated answer to the participant's trial at ``position`` (1-based).

    Args:
        db: a Connection or ORM Session (not in a transaction with pending writes).
        participant: has ``id``, ``cell_id`` and ``exclusion_reason`` (a row of
            :func:`webtest.trials.participant_state` or a :class:`webtest.tables.Participant`).
        served_at: when the trial was first shown to this participant (POSIX seconds; from the
            signed session cookie); ``None``: the time stored with the trial by earlier versions.
        now: the server time of the answer, POSIX seconds.
        trials: the rows of :func:`webtest.trials.trials_around` by position, if already read.

    Commits before returning a ``stored`` outcome (one commit: the answer, the cell's activity
    and the participant's progress together).
    """
    pid = participant.id
    if trials is None:
        trials = trials_around(db, pid, position)
    trial = trials.get(position)
    if served_at is None and trial is not None:
        served_at = trial.served_at
    refused = _refusal(db, pid, position, trials, served_at, now)
    if refused is not None:
        db.rollback()
        return refused
    score = signed_score(sub.raw_value, trial.side_shown)  # type: ignore[arg-type]
    flags = check_flags(db, trial, pid, sub.raw_answer, sub.raw_value, score, scale, reference=trials)
    rating_a = rating_b = None
    if scale.kind == "absolute":  # "left|right" -> ratings of system_a and system_b
        left, right = (float(v) for v in sub.raw_answer.split("|"))
        rating_a, rating_b = (left, right) if trial.side_shown == "left" else (right, left)
    row = dict(
        trial_id=trial.id, participant_id=pid, raw_answer=sub.raw_answer, raw_value=sub.raw_value,
        score=score, rating_a=rating_a, rating_b=rating_b, scale=scale.name, received_at=now,
        response_time_s=round(now - served_at, 4), client_time_s=sub.client_time_s,
        events_json=sub.events_json, flags=";".join(flags))
    nxt = position + 1 if position + 1 in trials else None
    if _dialect(db) == "postgresql" and not _reads_answers(rules, nxt is None, tuple(flags)):
        return _insert_with_cell(db, participant, position, nxt, row, tuple(flags), rules, now)
    try:
        db.execute(_INSERT, row)
    except IntegrityError:  # the same answer arrived twice at once; the first one won
        db.rollback()
        return _after(db, pid, position, "duplicate")
    return _finish(db, participant, position, nxt, tuple(flags), rules, now)


def _dialect(db) -> str:
    """``postgresql`` or ``sqlite``: the database behind a Connection or Session."""
    dialect = getattr(db, "dialect", None)
    return (dialect or db.get_bind().dialect).name


def _reads_answers(rules: Exclusion, completed: bool, new_flags: tuple[str, ...]) -> bool:
    """Whether :func:`exclusion_reason` must read stored answers (including the new one)."""
    limits = _limits(rules)
    return ((completed and rules.min_median_response_s is not None)
            or any(f in new_flags and limits[f] is not None for f in _COUNTED))


def _insert_with_cell(db, participant, position: int, nxt: int | None, row: dict, flags: tuple[str, ...],
                      rules: Exclusion, now: float) -> AnswerOutcome:
    """PostgreSQL, when the exclusion rules need no read: the answer's insert and the cell's
    update in one statement (a data-modifying CTE: one round trip less per answer), with the
    semantics of :func:`_finish`: a duplicate answer fails the insert (``duplicate``), a cell
    re-issued meanwhile matches no row and the answer is rolled back (``expired``)."""
    reason = exclusion_reason(db, participant.id, rules, nxt is None, participant.exclusion_reason or "", flags)
    cell, person, completed, screened = _plan(participant, nxt, reason, rules, now)
    try:
        matched = db.execute(_ANSWER_AND_CELL, {**{f"a_{k}": v for k, v in row.items()}, **cell}).scalar_one()
    except IntegrityError:  # the same answer arrived twice at once; the first one won
        db.rollback()
        return _after(db, participant.id, position, "duplicate")
    return _commit(db, participant, position, nxt, matched, person, reason, completed, screened)


def _finish(db, participant, position: int, nxt: int | None, flags: tuple[str, ...], rules: Exclusion,
            now: float) -> AnswerOutcome:
    """After the insert: exclusion rules, the cell (activity, done, or freed) and the participant,
    then the commit. A cell re-issued meanwhile (the holder had expired) undoes the answer."""
    reason = exclusion_reason(db, participant.id, rules, nxt is None, participant.exclusion_reason or "", flags)
    cell, person, completed, screened = _plan(participant, nxt, reason, rules, now)
    matched = db.execute(_CELL, cell).rowcount
    return _commit(db, participant, position, nxt, matched, person, reason, completed, screened)


def _plan(participant, nxt: int | None, reason: str, rules: Exclusion, now: float):
    """The cell's and the participant's new values after an answer:
    ``(cell params, person params, completed, screened)``."""
    completed = nxt is None
    screened = bool(reason) and rules.action == "screen_out"
    cell = {"cid": participant.cell_id, "pid": participant.id, "now": now, "cell_status": "assigned",
            "holder": participant.id}
    person = {"pid": participant.id, "now": now, "reason": reason, "status": "active", "stage": "trials",
              "completed_at": None}
    if screened:  # a declared rule fired: end the study for this participant, free the place
        cell.update(cell_status="free", holder=None)
        person.update(status="screened_out", stage="stopped")
        completed = False
    elif completed:
        cell["cell_status"] = "done"
        person.update(status="completed", stage="done", completed_at=now)
    return cell, person, completed, screened


def _commit(db, participant, position: int, nxt: int | None, matched: int, person: dict, reason: str,
            completed: bool, screened: bool) -> AnswerOutcome:
    """The participant's row if it changed, then the commit (``matched``: cells updated)."""
    if matched != 1:  # the cell was re-issued: the answer is not stored
        db.rollback()
        return AnswerOutcome("expired", position)
    if screened or completed or reason != (participant.exclusion_reason or ""):  # else the participant's row stays as it is
        db.execute(_PERSON, person)  # (the activity clock of a participant at the trials is the cell's)
    try:
        db.commit()
    except IntegrityError:
        db.rollback()
        return _after(db, participant.id, position, "duplicate")
    return AnswerOutcome("stored", position, next_position=nxt, completed=completed, screened_out=screened)


def _after(db, participant_id: str, position: int, status) -> AnswerOutcome:
    nxt = first_unanswered(db, participant_id)
    state = db.execute(_STATUS, {"pid": participant_id}).scalar_one_or_none()
    db.rollback()
    return AnswerOutcome(status, position, next_position=nxt, completed=nxt is None and state == "completed",
                         screened_out=state == "screened_out")
