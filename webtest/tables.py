"""Database tables (SQLAlchemy ORM). Times are POSIX seconds (float, UTC) from the server clock.

``wt_cells`` holds the design; ``wt_assignments`` logs every hand-out of a cell (unique per cell
and generation, so a cell can never be handed out twice by the same claim);
``wt_trials`` is a participant's own copy of their cell's trial list; ``wt_answers`` has at most
one row per trial (idempotent on participant and trial); ``wt_login_failures`` keeps wrong
admin passwords per client (the login rate limit, shared by every worker); ``wt_admin_sessions``
the logged-in admin browsers; ``wt_events`` the problems a participant's browser reported
(a stimulus that could not be loaded, no WebGL); ``wt_setup_results`` the outcome of each
setup stage (device check, volume calibration, headphone screening) per participant. ``wt_trials.served_at`` is written by versions before 0.4 only:
the time a trial was first shown now travels in the participant's signed cookie and the
answer's ``response_time_s`` keeps it. The view
``ratings_long`` (created by :func:`webtest.db.init_schema`) is the long-format export that
``reports`` reads.
"""

from __future__ import annotations

from sqlalchemy import Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class StudyRecord(Base):
    __tablename__ = "wt_studies"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    title: Mapped[str] = mapped_column(String(255), default="")
    design_hash: Mapped[str] = mapped_column(String(32))
    n_cells: Mapped[int] = mapped_column(Integer)
    scale: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[float] = mapped_column(Float)


class Cell(Base):
    __tablename__ = "wt_cells"
    __table_args__ = (
        UniqueConstraint("study_id", "idx", name="uq_cell_study_idx"),
        Index("ix_cell_study_status", "study_id", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    study_id: Mapped[str] = mapped_column(String(64), ForeignKey("wt_studies.id"))
    idx: Mapped[int] = mapped_column(Integer)
    trials_json: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="free")  # free | assigned | done
    participant_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    generation: Mapped[int] = mapped_column(Integer, default=0)
    assigned_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    last_seen_at: Mapped[float | None] = mapped_column(Float, nullable=True)


class Assignment(Base):
    __tablename__ = "wt_assignments"
    __table_args__ = (UniqueConstraint("cell_id", "generation", name="uq_assignment_cell_generation"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    cell_id: Mapped[int] = mapped_column(Integer, ForeignKey("wt_cells.id"))
    generation: Mapped[int] = mapped_column(Integer)
    participant_id: Mapped[str] = mapped_column(String(32))
    assigned_at: Mapped[float] = mapped_column(Float)


class Participant(Base):
    __tablename__ = "wt_participants"
    __table_args__ = (Index("ix_participant_study_ext", "study_id", "ext_pid"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    study_id: Mapped[str] = mapped_column(String(64), ForeignKey("wt_studies.id"))
    created_at: Mapped[float] = mapped_column(Float)
    last_seen_at: Mapped[float] = mapped_column(Float)
    # consent | demographics | instructions | trials | done | stopped
    stage: Mapped[str] = mapped_column(String(16), default="consent")
    # active | completed | declined | screened_out | expired | full
    status: Mapped[str] = mapped_column(String(16), default="active")
    cell_id: Mapped[int | None] = mapped_column(Integer, ForeignKey("wt_cells.id"), nullable=True)
    consent_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    completed_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    demographics_json: Mapped[str] = mapped_column(Text, default="{}")
    platform: Mapped[str] = mapped_column(String(16), default="none")
    ext_pid: Mapped[str | None] = mapped_column(String(64), nullable=True)
    ext_study: Mapped[str | None] = mapped_column(String(64), nullable=True)
    ext_session: Mapped[str | None] = mapped_column(String(64), nullable=True)
    ext_hit: Mapped[str | None] = mapped_column(String(64), nullable=True)
    ext_submit_to: Mapped[str | None] = mapped_column(String(255), nullable=True)
    exclusion_reason: Mapped[str] = mapped_column(String(255), default="")
    user_agent: Mapped[str] = mapped_column(String(255), default="")


class Trial(Base):
    __tablename__ = "wt_trials"
    __table_args__ = (UniqueConstraint("participant_id", "position", name="uq_trial_participant_position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    participant_id: Mapped[str] = mapped_column(String(32), ForeignKey("wt_participants.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)  # 1-based order shown
    kind: Mapped[str] = mapped_column(String(16))  # training | main | gold | attention | repeat
    item: Mapped[str] = mapped_column(String(128))
    system_a: Mapped[str] = mapped_column(String(128))
    system_b: Mapped[str] = mapped_column(String(128))
    stim_a: Mapped[str] = mapped_column(String(64))
    stim_b: Mapped[str] = mapped_column(String(64))
    side_shown: Mapped[str] = mapped_column(String(8))  # side of system_a: left | right
    expected: Mapped[float | None] = mapped_column(Float, nullable=True)
    tolerance: Mapped[float | None] = mapped_column(Float, nullable=True)
    ref_position: Mapped[int | None] = mapped_column(Integer, nullable=True)
    required_s: Mapped[float] = mapped_column(Float, default=0.0)
    served_at: Mapped[float | None] = mapped_column(Float, nullable=True)

    @property
    def stim_left(self) -> str:
        return self.stim_a if self.side_shown == "left" else self.stim_b

    @property
    def stim_right(self) -> str:
        return self.stim_b if self.side_shown == "left" else self.stim_a


class Answer(Base):
    __tablename__ = "wt_answers"
    __table_args__ = (UniqueConstraint("participant_id", "trial_id", name="uq_answer_participant_trial"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    trial_id: Mapped[int] = mapped_column(Integer, ForeignKey("wt_trials.id"), unique=True)
    participant_id: Mapped[str] = mapped_column(String(32), ForeignKey("wt_participants.id"), index=True)
    raw_answer: Mapped[str] = mapped_column(String(32))
    raw_value: Mapped[float] = mapped_column(Float)
    score: Mapped[float] = mapped_column(Float)
    # absolute scales (acr5): the rating of system_a's and system_b's stimulus
    rating_a: Mapped[float | None] = mapped_column(Float, nullable=True)
    rating_b: Mapped[float | None] = mapped_column(Float, nullable=True)
    scale: Mapped[str] = mapped_column(String(16))
    received_at: Mapped[float] = mapped_column(Float)
    response_time_s: Mapped[float] = mapped_column(Float)
    client_time_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    events_json: Mapped[str] = mapped_column(Text, default="[]")
    flags: Mapped[str] = mapped_column(String(255), default="")


class StimulusFile(Base):
    """The content fingerprint of each stimulus when the study was served (see
    :func:`webtest.db.ensure_stimulus_files`): answers rate these files."""

    __tablename__ = "wt_stimulus_files"

    study_id: Mapped[str] = mapped_column(String(64), ForeignKey("wt_studies.id"), primary_key=True)
    stimulus_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    digest: Mapped[str] = mapped_column(String(64))


class LoginFailure(Base):
    """A wrong admin password, kept for the rate-limit window (see :mod:`webtest.admin`)."""

    __tablename__ = "wt_login_failures"
    __table_args__ = (Index("ix_login_failure_study_address_at", "study_id", "address", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    study_id: Mapped[str] = mapped_column(String(64), ForeignKey("wt_studies.id"))
    # whose budget the failure counts against: "device:<id>" for a browser that logged in
    # before, else the client address as the server saw it
    address: Mapped[str] = mapped_column(String(64))
    at: Mapped[float] = mapped_column(Float)


class AdminSession(Base):
    """A logged-in admin browser (see :mod:`webtest.admin`): the cookie holds a random token,
    this table its SHA-256, so a session ends server-side on logout, on "log out everywhere"
    and at ``expires_at`` (POSIX seconds)."""

    __tablename__ = "wt_admin_sessions"
    __table_args__ = (Index("ix_admin_session_study", "study_id"),)

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    study_id: Mapped[str] = mapped_column(String(64), ForeignKey("wt_studies.id"))
    created_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float)


class Event(Base):
    """A problem a participant's browser reported on a trial page (see
    :func:`webtest.participant.trial_event`): ``type`` ``load_failed`` (a stimulus could not be
    loaded after a retry; ``side`` left/right) or ``no_webgl`` (motion could not be drawn and the
    study has no fallback videos). One row per participant, position, type and side (a page
    reloaded again and again adds nothing); ``at`` POSIX seconds."""

    __tablename__ = "wt_events"
    __table_args__ = (UniqueConstraint("participant_id", "position", "type", "side", name="uq_event_once"),
                      Index("ix_event_study", "study_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    study_id: Mapped[str] = mapped_column(String(64), ForeignKey("wt_studies.id"))
    participant_id: Mapped[str] = mapped_column(String(32), ForeignKey("wt_participants.id"))
    position: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(32))
    side: Mapped[str] = mapped_column(String(8), default="")
    detail: Mapped[str] = mapped_column(String(255), default="")
    at: Mapped[float] = mapped_column(Float)


class SetupResult(Base):
    """The outcome of one setup stage of one participant (see :mod:`webtest.setup`): ``stage``
    ``device`` / ``volume`` / ``headphones``, ``passed`` 1 or 0, ``score`` (headphones: trials
    correct), ``attempts`` (device: how often the window was measured), ``detail_json`` what
    was measured (window and screen size, pointer; the headphone answers), ``at`` POSIX seconds
    of the last attempt. Kept in its own table, so databases made before the setup stages
    existed gain it on start (``create_all``) with no change to the others."""

    __tablename__ = "wt_setup_results"
    __table_args__ = (UniqueConstraint("participant_id", "stage", name="uq_setup_participant_stage"),
                      Index("ix_setup_study", "study_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    study_id: Mapped[str] = mapped_column(String(64), ForeignKey("wt_studies.id"))
    participant_id: Mapped[str] = mapped_column(String(32), ForeignKey("wt_participants.id"))
    stage: Mapped[str] = mapped_column(String(16))
    passed: Mapped[int] = mapped_column(Integer)
    score: Mapped[int | None] = mapped_column(Integer, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    detail_json: Mapped[str] = mapped_column(Text, default="{}")
    at: Mapped[float] = mapped_column(Float)
