"""The WSGI layer in front of the Flask app: security headers on every response, and stimulus
files answered before Flask is entered.

A stimulus is fetched twice per trial by every participant, and its answer never depends on who
asks: the name is a content hash (:func:`webtest.stimuli.stimulus_names`), so the status line,
the headers and, for small files, the bytes are computed once per process. Such a request costs
no request context, session cookie, CSRF check or URL routing. Everything the precomputed answer
does not cover goes to Flask unchanged: unknown names (its 404 page), ``Range`` requests (media
seeking, answered 206 by ``send_file``), conditional requests other than a matching
``If-None-Match``, methods other than GET/HEAD, and files too large to keep in memory.

Written by hand rather than with a static-file library (e.g. WhiteNoise) because the served
names are not file names on disk and the same security headers must go on every response; it is
about forty lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Mapping

#: Headers added to every response (unless the response already has one of that name).
SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "same-origin"),
    ("Content-Security-Policy",
     "default-src 'self'; img-src 'self' data:; media-src 'self'; style-src 'self'; "
     "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
     "form-action 'self' https:"),
)
#: Files up to this size are kept in memory (bytes); larger ones are sent by Flask's send_file.
MAX_CACHED_FILE = 4 * 1024 * 1024
#: At most this many bytes of stimuli are kept in memory per worker process.
MAX_CACHED_TOTAL = 64 * 1024 * 1024
PREFIX = "/stimulus/"
#: Browser cache lifetime of a stimulus, seconds: its name changes whenever its bytes do.
STIMULUS_MAX_AGE = 365 * 24 * 3600


class WebtestWSGI:
    """Wraps ``app.wsgi_app``: adds :data:`SECURITY_HEADERS`, answers cached stimuli itself.

    Args:
        app: the wrapped WSGI callable (Flask's ``wsgi_app``).
        files: served name -> ``(path, mimetype)`` (``StudyState.stimulus_files``).
        max_age: browser cache lifetime of a stimulus, seconds (sent as ``immutable``).
    """

    def __init__(self, app: Callable, files: Mapping[str, tuple[str, str]], max_age: int):
        self.app = app
        self.files: dict[str, tuple[bytes, list[tuple[str, str]], str]] = {}
        total = 0
        for name, (path, mimetype) in files.items():
            size = Path(path).stat().st_size
            if size > MAX_CACHED_FILE or total + size > MAX_CACHED_TOTAL:
                continue
            body = Path(path).read_bytes()
            total += len(body)
            etag = f'"{name.split(".", 1)[0]}"'  # the name is the content hash
            headers = [("Content-Type", mimetype), ("Content-Length", str(len(body))), ("ETag", etag),
                       ("Cache-Control", f"private, max-age={max_age}, immutable"), *SECURITY_HEADERS]
            self.files[name] = (body, headers, etag)

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path.startswith(PREFIX) and environ.get("REQUEST_METHOD") in ("GET", "HEAD") \
                and "HTTP_RANGE" not in environ and "HTTP_IF_MODIFIED_SINCE" not in environ:
            found = self.files.get(path[len(PREFIX):])
            if found is not None:
                body, headers, etag = found
                match = environ.get("HTTP_IF_NONE_MATCH")
                if match is None:
                    start_response("200 OK", headers)
                    return [b""] if environ["REQUEST_METHOD"] == "HEAD" else [body]
                if etag in (m.strip() for m in match.split(",")) or match.strip() == "*":
                    start_response("304 Not Modified", [h for h in headers if h[0] != "Content-Length"])
                    return [b""]

        def with_headers(status, headers, exc_info=None):
            have = {k.lower() for k, _ in headers}
            headers.extend(h for h in SECURITY_HEADERS if h[0].lower() not in have)
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

        return self.app(environ, with_headers)
