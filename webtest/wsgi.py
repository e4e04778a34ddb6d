"""WSGI entry point for gunicorn: the study comes from ``EVALKIT_STUDY``.

    EVALKIT_STUDY=studies/example-cmu EVALKIT_ADMIN_PASSWORD_HASH='scrypt:...' \\
        gunicorn -w 4 -b 127.0.0.1:8000 'webtest.wsgi:app'

``EVALKIT_DATABASE_URL`` selects PostgreSQL (default: SQLite in the study folder).
"""

from webtest import create_app

app = create_app()
