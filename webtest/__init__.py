"""webtest: online pairwise viewing/listening tests (CCR/CMOS scales) on Flask.

Serve a study with ``evalkit serve studies/<name>`` or, in production, with gunicorn::

    EVALKIT_STUDY=studies/example-cmu gunicorn -w 4 -b 127.0.0.1:8000 'webtest.wsgi:app'

Library entry points: :func:`create_app` (the Flask app factory) and :func:`prepare_study`
(validate ``study.yaml`` and precompute stimulus JSON, e.g. for ``evalkit study build``);
:func:`stored_answers` (how many answers a study's database holds, e.g. before a rebuild).
"""

from webtest.app import PreparedStudy, create_app, prepare_study
from webtest.config import WebtestConfig
from webtest.db import stored_answers
from webtest.scales import SCALES, Scale, get_scale, signed_score
from webtest.study import Study, load_study

__all__ = ["create_app", "prepare_study", "PreparedStudy", "WebtestConfig", "Study", "load_study",
           "SCALES", "Scale", "get_scale", "signed_score", "stored_answers"]
