"""Recording answers: validation, timing check, sign correction, check flags, exclusion rules.

:func:`parse_submission` validates a submitted body on its own (the same answer is invalid
whatever the state of the trial); :func:`store_answer` then stores it and commits before it
returns, so the caller acknowledges only a stored answer. Storing is idempotent on
(participant, trial): a second submission of an answered trial returns the stored answer
unchanged (first answer wins), also when two arrive at once. :func:`record_answer` does both.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evalkit.errors import InputError
from webtest.assignment import release_cell, touch
from webtest.models import Answer, Cell, Participant, Trial
from webtest.scales import Scale, signed_score
from webtest.study import Exclusion

MAX_EVENTS = 500


@dataclass(frozen=True)
class AnswerOutcome:
    """What happened to a submitted answer.

    status: ``stored`` (new), ``duplicate`` (already stored; the stored one is kept),
    ``too_fast`` (rejected: sooner than the stimuli could have played), ``not_shown`` (the trial
    was never displayed), ``out_of_order`` (an earlier trial is unanswered), ``not_found``.
    """

    status: Literal["stored", "duplicate", "too_fast", "not_shown", "out_of_order", "not_found"]
    position: int
    next_position: int | None = None
    completed: bool = False
    screened_out: bool = False
    wait_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status in ("stored", "duplicate")


def first_unanswered(session: Session, participant_id: str) -> int | None:
    """Position of the first trial without an answer (``None`` when all are answered)."""
    answered = select(Answer.trial_id).where(Answer.participant_id == participant_id)
    return session.execute(
        select(func.min(Trial.position)).where(Trial.participant_id == participant_id, Trial.id.not_in(answered))
    ).scalar_one_or_none()


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
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)


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


def is_answered(session: Session, participant_id: str, position: int) -> bool:
    """Whether the participant's trial at ``position`` has a stored answer."""
    return session.execute(
        select(Answer.id).join(Trial, Trial.id == Answer.trial_id)
        .where(Trial.participant_id == participant_id, Trial.position == position)).first() is not None


def check_flags(session: Session, trial: Trial, raw_answer: str, raw_value: float, score: float, scale: Scale) -> list[str]:
    """Flags of an answer to a check trial: ``check`` and ``check:<kind>``, plus ``check_failed``
    and ``<kind>_fail`` / ``repeat_inconsistent`` when it failed (the generic tokens are the
    ones ``reports`` screens on)."""
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
        ref_score = session.execute(
            select(Answer.score).join(Trial, Trial.id == Answer.trial_id)
            .where(Trial.participant_id == trial.participant_id, Trial.position == trial.ref_position)
        ).scalar_one_or_none()
        if ref_score is not None and abs(score - ref_score) > tol + 1e-9:
            flags.append("repeat_inconsistent")
    if len(flags) > 2:
        flags.insert(2, "check_failed")
    return flags


def exclusion_reason(session: Session, participant_id: str, rules: Exclusion, completed: bool) -> str:
    """Which declared exclusion rules the participant's answers so far break ('' if none)."""
    rows = session.execute(
        select(Answer.flags, Answer.response_time_s, Trial.kind).join(Trial, Trial.id == Answer.trial_id)
        .where(Answer.participant_id == participant_id)
    ).all()
    counts = {"gold_fail": 0, "attention_fail": 0, "repeat_inconsistent": 0}
    for flags, _, _ in rows:
        for f in flags.split(";"):
            if f in counts:
                counts[f] += 1
    reasons = []
    for key, limit in (("gold_fail", rules.max_gold_failures), ("attention_fail", rules.max_attention_failures),
                       ("repeat_inconsistent", rules.max_repeat_inconsistencies)):
        if limit is not None and counts[key] > limit:
            reasons.append(f"{key}:{counts[key]}>{limit}")
    if completed and rules.min_median_response_s is not None:
        times = [rt for _, rt, kind in rows if kind != "training"]
        if times and statistics.median(times) < rules.min_median_response_s:
            reasons.append(f"median_response_s<{rules.min_median_response_s:g}")
    return ";".join(reasons)


def record_answer(session: Session, participant: Participant, position: int, raw, scale: Scale,
                  rules: Exclusion, now: float, client_time_s: float | None = None, events=None) -> AnswerOutcome:
    """Validate (:func:`parse_submission`) and store (:func:`store_answer`) an answer.

    Raises :class:`InputError` for an invalid submission, whatever the state of the trial.
    """
    sub = parse_submission(raw, scale, client_time_s=client_time_s, events=events)
    return store_answer(session, participant, position, sub, scale, rules, now)


def store_answer(session: Session, participant: Participant, position: int, sub: Submission, scale: Scale,
                 rules: Exclusion, now: float) -> AnswerOutcome:
    """Store the validated answer to the participant's trial at ``position`` (1-based).

    Commits before returning a ``stored`` outcome.
    """
    trial = session.execute(
        select(Trial).where(Trial.participant_id == participant.id, Trial.position == position)
    ).scalar_one_or_none()
    if trial is None:
        return AnswerOutcome("not_found", position)
    existing = session.execute(select(Answer.id).where(Answer.trial_id == trial.id)).first()
    if existing is not None:
        return _after(session, participant, position, "duplicate")
    current = first_unanswered(session, participant.id)
    if current is not None and position > current:
        return AnswerOutcome("out_of_order", position, next_position=current)
    if trial.served_at is None:
        return AnswerOutcome("not_shown", position, next_position=position)
    elapsed = now - trial.served_at
    if elapsed + 1e-6 < trial.required_s:
        return AnswerOutcome("too_fast", position, next_position=position, wait_s=trial.required_s - elapsed)
    raw_text, raw_value = sub.raw_answer, sub.raw_value
    score = signed_score(raw_value, trial.side_shown)  # type: ignore[arg-type]
    flags = check_flags(session, trial, raw_text, raw_value, score, scale)
    rating_a = rating_b = None
    if scale.kind == "absolute":  # "left|right" -> ratings of system_a and system_b
        left, right = (float(v) for v in raw_text.split("|"))
        rating_a, rating_b = (left, right) if trial.side_shown == "left" else (right, left)
    session.add(Answer(
        trial_id=trial.id, participant_id=participant.id, raw_answer=raw_text, raw_value=raw_value, score=score,
        rating_a=rating_a, rating_b=rating_b, scale=scale.name, received_at=now, response_time_s=round(elapsed, 4),
        client_time_s=sub.client_time_s, events_json=sub.events_json, flags=";".join(flags)))
    try:
        session.flush()
    except IntegrityError:  # the same answer arrived twice at once; the first one won
        session.rollback()
        return _after(session, participant, position, "duplicate")
    nxt = first_unanswered(session, participant.id)
    completed = nxt is None
    reason = exclusion_reason(session, participant.id, rules, completed)
    screened = bool(reason) and rules.action == "screen_out"
    participant.exclusion_reason = reason
    touch(session, participant, now)
    if screened:  # a declared rule fired: end the study for this participant, free the place
        participant.status, participant.stage = "screened_out", "stopped"
        release_cell(session, participant)
        completed = False
    elif completed:
        participant.status, participant.stage, participant.completed_at = "completed", "done", now
        session.execute(update(Cell).where(Cell.id == participant.cell_id, Cell.participant_id == participant.id)
                        .values(status="done").execution_options(synchronize_session=False))
    session.add(participant)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        return _after(session, participant, position, "duplicate")
    return AnswerOutcome("stored", position, next_position=nxt, completed=completed, screened_out=screened)


def _after(session: Session, participant: Participant, position: int, status) -> AnswerOutcome:
    session.refresh(participant)
    nxt = first_unanswered(session, participant.id)
    return AnswerOutcome(status, position, next_position=nxt, completed=nxt is None,
                         screened_out=participant.status == "screened_out")


def mark_served(session: Session, trial: Trial, now: float) -> None:
    """Record the first time a trial was displayed (the start of its playing-time window)."""
    if trial.served_at is None:
        session.execute(update(Trial).where(Trial.id == trial.id, Trial.served_at.is_(None))
                        .values(served_at=now).execution_options(synchronize_session=False))
