"""Reading a participant's state and trials on the hot path: one SQL statement each.

The trial page and the answer use SQLAlchemy Core statements built once at import with bound
parameters (their compiled form and cache key are reused) rather than ORM objects: these are
the requests every answer makes, and most of their database time was building statements. Answers are stored strictly in order, so a participant's answered
trials are always the positions ``1..k`` and the first unanswered trial is ``k + 1``.
"""

from __future__ import annotations

from typing import Any, Sequence

from sqlalchemy import bindparam, exists, func, select, update
from sqlalchemy.engine import Row

from webtest.tables import Answer, Cell, Participant, Trial

P = Participant.__table__
C = Cell.__table__
T = Trial.__table__
A = Answer.__table__

_PARTICIPANT = (select(P.c.id, P.c.study_id, P.c.stage, P.c.status, P.c.cell_id, P.c.exclusion_reason,
                       P.c.platform, C.c.participant_id.label("holder"))
                .select_from(P.outerjoin(C, C.c.id == P.c.cell_id)))
_TRIAL_COLUMNS = (T.c.id, T.c.position, T.c.kind, T.c.stim_a, T.c.stim_b, T.c.side_shown, T.c.expected,
                  T.c.tolerance, T.c.ref_position, T.c.required_s, T.c.served_at, A.c.id.label("answer_id"),
                  A.c.score)
_TRIALS = select(*_TRIAL_COLUMNS).select_from(T.outerjoin(A, A.c.trial_id == T.c.id))
_PARTICIPANT_BY_ID = _PARTICIPANT.where(P.c.id == bindparam("pid"), P.c.study_id == bindparam("study"))
_ALL_TRIALS = _TRIALS.where(T.c.participant_id == bindparam("pid")).order_by(T.c.position)
_REFERENCE = (select(T.c.ref_position).where(T.c.participant_id == bindparam("pid"), T.c.position == bindparam("pos"))
              .scalar_subquery())
_AROUND = _TRIALS.where(T.c.participant_id == bindparam("pid"),
                        T.c.position.between(bindparam("lo"), bindparam("hi")) | (T.c.position == _REFERENCE))
# The same with the participant's state on every row (one statement instead of two on the hot path)
_PERSON_COLUMNS = (P.c.stage.label("p_stage"), P.c.status.label("p_status"), P.c.cell_id.label("p_cell_id"),
                   P.c.exclusion_reason.label("p_exclusion_reason"), C.c.participant_id.label("p_holder"))
_WITH_PERSON = (select(*_TRIAL_COLUMNS, *_PERSON_COLUMNS)
                .select_from(P.join(T, T.c.participant_id == P.c.id).outerjoin(A, A.c.trial_id == T.c.id)
                             .outerjoin(C, C.c.id == P.c.cell_id))
                .where(P.c.id == bindparam("pid"), P.c.study_id == bindparam("study")))
_ALL_WITH_PERSON = _WITH_PERSON.order_by(T.c.position)
_AROUND_WITH_PERSON = _WITH_PERSON.where(
    T.c.position.between(bindparam("lo"), bindparam("hi")) | (T.c.position == _REFERENCE))
_FIRST_UNANSWERED = select(func.min(T.c.position)).where(
    T.c.participant_id == bindparam("pid"),
    T.c.id.not_in(select(A.c.trial_id).where(A.c.participant_id == bindparam("pid"))))
_IS_ANSWERED = select(A.c.id).join(T, T.c.id == A.c.trial_id).where(
    T.c.participant_id == bindparam("pid"), T.c.position == bindparam("pos"))


_TO_TRIALS = (update(P).where(P.c.id == bindparam("pid"), P.c.study_id == bindparam("study"),
                              P.c.stage == "instructions", P.c.status == "active",
                              exists().where(C.c.id == P.c.cell_id, C.c.participant_id == P.c.id))
              .values(stage="trials", last_seen_at=bindparam("now")))
_TOUCH_CELL = (update(C).where(C.c.id == select(P.c.cell_id).where(P.c.id == bindparam("pid")).scalar_subquery(),
                               C.c.participant_id == bindparam("pid"), C.c.status == "assigned")
               .values(last_seen_at=bindparam("now")))


def begin_trials(conn, participant_id: str, study_id: str, now: float) -> bool:
    """Move a participant who is at the instructions (active, holding their cell) to the trials
    and record the activity on their cell, in two statements and one commit. ``False`` (nothing
    changed) when the participant is anywhere else."""
    if conn.execute(_TO_TRIALS, {"pid": participant_id, "study": study_id, "now": now}).rowcount != 1:
        conn.rollback()
        return False
    conn.execute(_TOUCH_CELL, {"pid": participant_id, "now": now})
    conn.commit()
    return True


_STOP = update(P).where(P.c.id == bindparam("pid")).values(status=bindparam("status"), stage="stopped",
                                                          last_seen_at=bindparam("now"))


def stop_participant(conn, participant_id: str, status: str, now: float) -> None:
    """End the participant's study with ``status`` (e.g. ``declined``, ``full``) and commit."""
    conn.execute(_STOP, {"pid": participant_id, "status": status, "now": now})
    conn.commit()


def participant_state(db, participant_id: str, study_id: str) -> Row | None:
    """The participant's ``id, study_id, stage, status, cell_id, exclusion_reason, platform`` and
    ``holder`` (who holds their cell now), or ``None``. ``db``: a Connection or Session."""
    return db.execute(_PARTICIPANT_BY_ID, {"pid": participant_id, "study": study_id}).first()


def at_trials(row: Row | None) -> bool:
    """Whether the participant may see and answer trials: active, at the trials, holding a cell."""
    return (row is not None and row.status == "active" and row.stage == "trials"
            and row.holder is not None and row.holder == row.id)


def all_trials(db, participant_id: str) -> Sequence[Row]:
    """Every trial of the participant in order, with ``answer_id`` (``None`` when unanswered)."""
    return db.execute(_ALL_TRIALS, {"pid": participant_id}).all()


def trials_around(db, participant_id: str, position: int) -> dict[int, Row]:
    """The trials at ``position - 1``, ``position`` and ``position + 1`` and, for a repeat
    trial, the trial it repeats (with its answer's ``score``), by position."""
    rows = db.execute(_AROUND, {"pid": participant_id, "pos": position, "lo": position - 1,
                                "hi": position + 1}).all()
    return {r.position: r for r in rows}


class Person:
    """A participant's ``id, stage, status, cell_id, exclusion_reason, holder`` as read with their
    trials (see :func:`trials_with_state`)."""

    __slots__ = ("id", "stage", "status", "cell_id", "exclusion_reason", "holder")

    def __init__(self, participant_id: str, row: Row):
        self.id = participant_id
        self.stage, self.status, self.cell_id = row.p_stage, row.p_status, row.p_cell_id
        self.exclusion_reason, self.holder = row.p_exclusion_reason, row.p_holder


def trials_with_state(db, participant_id: str, study_id: str,
                      position: int | None = None) -> tuple[Person | None, Sequence[Row]]:
    """The participant's state and trials in one statement: every trial in order, or (with
    ``position``) those of :func:`trials_around`. ``(None, [])`` when no trial matched (no such
    participant, none before the consent, or no such position): ask :func:`participant_state`."""
    if position is None:
        rows = db.execute(_ALL_WITH_PERSON, {"pid": participant_id, "study": study_id}).all()
    else:
        rows = db.execute(_AROUND_WITH_PERSON, {"pid": participant_id, "study": study_id, "pos": position,
                                                "lo": position - 1, "hi": position + 1}).all()
    return (Person(participant_id, rows[0]) if rows else None), rows


def first_unanswered(db, participant_id: str) -> int | None:
    """Position of the first trial without an answer (``None`` when all are answered)."""
    return db.execute(_FIRST_UNANSWERED, {"pid": participant_id}).scalar_one_or_none()


def current_position(trials: Sequence[Any]) -> int | None:
    """First unanswered position in rows of :func:`all_trials` (``None``: all answered)."""
    return next((t.position for t in trials if t.answer_id is None), None)


def is_answered(db, participant_id: str, position: int) -> bool:
    """Whether the participant's trial at ``position`` has a stored answer."""
    return db.execute(_IS_ANSWERED, {"pid": participant_id, "pos": position}).first() is not None


def stim_left(trial) -> str:
    """Stimulus id shown on the left (``side_shown`` is the side of system A)."""
    return trial.stim_a if trial.side_shown == "left" else trial.stim_b


def stim_right(trial) -> str:
    return trial.stim_b if trial.side_shown == "left" else trial.stim_a
