"""The per-app study state the blueprints read (``current_app.extensions["webtest"]``).

Kept apart from :mod:`webtest.app` so that the blueprints read the state of the app serving the
request through :data:`flask.current_app`, as the Flask tutorial does, without importing the
app factory (no import circle).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flask import current_app

from webtest.config import WebtestConfig
from webtest.db import Database
from webtest.stimuli import PreparedStimulus
from webtest.strings import translate
from webtest.study import Study

EXTENSION = "webtest"


@dataclass(frozen=True)
class PreparedStudy:
    """A validated study with its stimuli precomputed and its design built.

    Attributes:
        study: the validated study file.
        stimuli: stimulus id -> prepared stimulus (positions JSON or media, duration in seconds).
        cells_json: one JSON trial list per design cell.
        design_hash: fingerprint of the design (changes when the design changes).
        balance: counts of condition-sides over cells (see :func:`webtest.design.balance_report`).
        setup_sounds: the setup stages' sounds, name -> WAV path (see :func:`webtest.setup.write_sounds`).
    """

    study: Study
    stimuli: dict[str, PreparedStimulus]
    cells_json: list[str]
    design_hash: str
    balance: dict
    setup_sounds: dict = field(default_factory=dict)


@dataclass(frozen=True)
class StudyState:
    """What the blueprints need, stored in ``app.extensions["webtest"]`` (no module globals).

    ``stimulus_urls`` maps stimulus id to the content-addressed names it is served under
    (``{"file": "<token>.json", "audio": "<token>.wav"}``) and ``stimulus_files`` maps such a
    name back to ``(path, mimetype)``; see :func:`webtest.stimuli.stimulus_names`.
    """

    prepared: PreparedStudy
    db: Database
    strings: dict[str, str]
    admin_password_hash: str | None
    config: WebtestConfig
    stimulus_urls: dict[str, dict[str, str]] = field(default_factory=dict)
    stimulus_files: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: the setup sounds' served names (``calibration``, ``order-<k>`` -> name under /stimulus/)
    setup_urls: dict[str, str] = field(default_factory=dict)
    #: rendered trial pages of this process (see :func:`webtest.participant.trial_page`)
    pages: dict[tuple, str] = field(default_factory=dict)

    @property
    def study(self) -> Study:
        return self.prepared.study

    @property
    def stimuli(self) -> dict[str, PreparedStimulus]:
        return self.prepared.stimuli

    def t(self, key: str, **values) -> str:
        return translate(self.strings, key, **values)


def state() -> StudyState:
    """The :class:`StudyState` of the app serving the current request."""
    return current_app.extensions[EXTENSION]
