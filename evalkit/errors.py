"""One exception family for every user-facing error.

The CLI turns any :class:`EvalkitError` into a one-line message and a non-zero exit code, never a
traceback. Errors about a file carry the path and, where it is known, the 1-based line number.
"""

from __future__ import annotations

from pathlib import Path


class EvalkitError(Exception):
    """Base class of all errors that are the user's to fix (bad input, bad configuration)."""


class FileFormatError(EvalkitError, ValueError):
    """A file is malformed. The message names the file, the line and what was expected."""

    def __init__(self, path: str | Path | None, line: int | None, message: str):
        self.path = str(path) if path is not None else None
        self.line = line
        self.reason = message
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}, line {line}"
        super().__init__(f"{where}: {message}")


class RolesNotFoundError(EvalkitError):
    """The semantic joint roles a computation needs could not be found in a skeleton."""


class ConfigError(EvalkitError, ValueError):
    """A configuration or study file is invalid; the message names the key path and the fix."""


class InputError(EvalkitError, ValueError):
    """An argument or data value passed by the user is invalid."""
