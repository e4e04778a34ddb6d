"""Atomic assignment of design cells to participants.

A claim is a compare-and-set on the cell's ``generation``::

    UPDATE wt_cells SET status='assigned', participant_id=:p, generation=:g+1, ...
    WHERE id=:id AND generation=:g AND (status='free' OR (status='assigned' AND last_seen_at < :cutoff))

Only one concurrent claim can match (SQLite serialises writers; PostgreSQL re-checks the WHERE
clause after the row lock), and the hand-out is logged in ``wt_assignments`` whose unique
``(cell_id, generation)`` makes a double hand-out impossible even by mistake. A cell whose holder
has been inactive for ``assignment.timeout_minutes`` is re-issued; the old holder then sees the
"expired" page. The trials of the cell are copied to the participant in the same transaction.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from sqlalchemy import and_, bindparam, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from webtest.design import cell_from_json
from webtest.tables import Assignment, Cell, Participant, Trial
from webtest.stimuli import PreparedStimulus
from webtest.study import Study


@dataclass(frozen=True)
class ClaimResult:
    cell_id: int
    cell_idx: int
    generation: int
    n_trials: int


# The claim's statements, built once with bound parameters (their compiled form is reused;
# building them per request was a visible share of the enrolment's CPU).
_C = Cell.__table__
_CLAIMABLE = and_(_C.c.study_id == bindparam("study"),
                  or_(_C.c.status == "free", and_(_C.c.status == "assigned", _C.c.last_seen_at < bindparam("cutoff"))))
_ANY_CLAIMABLE = select(_C.c.id).where(_CLAIMABLE).limit(1)
_CANDIDATES = (select(_C.c.id, _C.c.generation, _C.c.idx).where(_CLAIMABLE)
               .order_by(_C.c.status.desc(), _C.c.generation, _C.c.idx)  # 'free' > 'assigned'
               .limit(4))
_CANDIDATES_PG = _CANDIDATES.with_for_update(skip_locked=True)
_TAKE = (update(_C)
         .where(_C.c.id == bindparam("cid"), _C.c.generation == bindparam("gen"),
                or_(_C.c.status == "free", and_(_C.c.status == "assigned", _C.c.last_seen_at < bindparam("cutoff"))))
         .values(status="assigned", participant_id=bindparam("pid"), generation=bindparam("new_gen"),
                 assigned_at=bindparam("now"), last_seen_at=bindparam("now"))
         .returning(_C.c.trials_json))


def has_free_cell(session: Session | Connection, study_id: str, now: float, timeout_s: float) -> bool:
    """Whether a cell could be claimed now (free, or held by an inactive participant)."""
    return session.execute(_ANY_CLAIMABLE, {"study": study_id, "cutoff": now - timeout_s}).first() is not None


def required_seconds(study: Study, stim_left: PreparedStimulus, stim_right: PreparedStimulus) -> float:
    """Least time (s) between showing a trial and accepting its answer (see ``Playback``)."""
    pb = study.playback
    if not pb.must_end:
        return float(pb.min_time_s)
    d = [stim_left.duration_s, stim_right.duration_s]
    if stim_left.id == stim_right.id:
        play = d[0] * (2 if pb.exclusive else 1)
    else:
        play = sum(d) if pb.exclusive else max(d)
    return float(max(pb.min_time_s, pb.slack * play))


def claim_cell(session: Session | Connection, study: Study, stimuli: dict[str, PreparedStimulus],
               participant_id: str, now: float, max_rounds: int = 50,
               updates: dict | None = None) -> ClaimResult | None:
    """Give the participant a design cell and create their trials; ``None`` if the study is full.

    Commits on success, together with ``updates`` (participant column -> value, e.g. the next
    stage), all in Core statements (``session`` may be an ORM Session or a Connection; an ORM
    object of the participant loaded before is not refreshed). Free cells go first (lowest
    index first), then expired ones.
    """
    cutoff = now - study.assignment_timeout_s
    rng = random.Random()
    dialect = session.dialect if isinstance(session, Connection) else session.get_bind().dialect
    pg = dialect.name == "postgresql"
    for _ in range(max_rounds):
        # on PostgreSQL concurrent claimers pick different rows instead of queueing on one
        rows = session.execute(_CANDIDATES_PG if pg else _CANDIDATES, {"study": study.id, "cutoff": cutoff}).all()
        if not rows:
            session.rollback()
            if pg and has_free_cell(session, study.id, now, study.assignment_timeout_s):
                session.rollback()
                time.sleep(0.005 + 0.02 * rng.random())  # all claimable rows are being claimed right now
                continue
            return None
        cid, gen, idx = rows[rng.randrange(len(rows))] if len(rows) > 1 else rows[0]
        trials_json = session.execute(_TAKE, {"cid": cid, "gen": gen, "cutoff": cutoff, "pid": participant_id,
                                              "new_gen": gen + 1, "now": now}).scalar_one_or_none()
        if trials_json is None:  # someone else claimed it first
            session.rollback()
            continue
        specs = _copy_trials(session, study, stimuli, participant_id, cid, gen + 1, trials_json, now)
        session.execute(update(Participant.__table__).where(Participant.__table__.c.id == participant_id)
                        .values(cell_id=cid, last_seen_at=now, **(updates or {})))
        session.commit()
        return ClaimResult(cid, idx, gen + 1, specs)
    session.rollback()
    return None


def _copy_trials(session: Session, study: Study, stimuli: dict[str, PreparedStimulus], participant_id: str,
                 cell_id: int, generation: int, trials_json: str, now: float) -> int:
    """Log the hand-out and give the participant their own copy of the cell's trials (one
    multi-row insert); returns the number of trials."""
    # Core inserts of the tables (not the ORM's bulk insert, which splits the rows into one
    # statement per set of non-NULL columns): the trials go in one executemany
    session.execute(Assignment.__table__.insert(), [{"cell_id": cell_id, "generation": generation,
                                                     "participant_id": participant_id, "assigned_at": now}])
    specs = cell_from_json(trials_json)
    session.execute(Trial.__table__.insert(), [{
        "participant_id": participant_id, "position": pos, "kind": spec.kind, "item": spec.item,
        "system_a": spec.system_a, "system_b": spec.system_b, "stim_a": spec.stim_a, "stim_b": spec.stim_b,
        "side_shown": spec.side_shown, "expected": spec.expected, "tolerance": spec.tolerance,
        "ref_position": (spec.ref + 1) if spec.ref is not None else None,
        "required_s": required_seconds(study, stimuli[spec.stim_left], stimuli[spec.stim_right]),
    } for pos, spec in enumerate(specs, start=1)])
    return len(specs)


def holds_cell(session: Session, participant: Participant) -> bool:
    """Whether the participant still holds their cell (it was not re-issued after expiry)."""
    if participant.cell_id is None:
        return False
    holder = session.execute(select(Cell.participant_id).where(Cell.id == participant.cell_id)).scalar_one_or_none()
    return holder == participant.id


def touch(session: Session, participant: Participant, now: float) -> None:
    """Record activity (keeps the cell from expiring). Does not commit."""
    participant.last_seen_at = now
    if participant.cell_id is not None:
        session.execute(update(Cell).where(Cell.id == participant.cell_id, Cell.participant_id == participant.id,
                                           Cell.status == "assigned")
                        .values(last_seen_at=now).execution_options(synchronize_session=False))


def release_cell(session: Session, participant: Participant) -> None:
    """Give the participant's cell back (screened out): it becomes free for someone else."""
    if participant.cell_id is not None:
        session.execute(update(Cell).where(Cell.id == participant.cell_id, Cell.participant_id == participant.id)
                        .values(status="free", participant_id=None).execution_options(synchronize_session=False))
