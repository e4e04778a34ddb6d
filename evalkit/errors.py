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


def yaml_error(path: str | Path, exc: Exception, text: str | None = None, fix: str = "") -> ConfigError:
    """The one way to report a YAML syntax error: ``FILE, line N: not valid YAML (problem)[; fix]``.

    ``exc`` is the ``yaml.YAMLError`` that ``yaml.safe_load``/``yaml.compose`` raised; its line
    comes from PyYAML's ``problem_mark`` (0-based, reported 1-based). A character YAML does not
    allow (``yaml.reader.ReaderError``) carries an offset instead: give the document's ``text`` to
    turn it into a line. Read by attribute, so this module needs no yaml import (the motion core
    may use it, see docs/ARCHITECTURE.md).
    """
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    if text is not None and isinstance(getattr(exc, "position", None), int) and hasattr(exc, "character"):
        line = text.count("\n", 0, exc.position) + 1  # ReaderError: a character YAML does not allow
        problem = (f"character #x{exc.character:04x} is not allowed" if isinstance(exc.character, int)
                   else getattr(exc, "reason", problem))
    problem = " ".join(str(problem).split())
    where = f", line {line}" if line is not None else ""
    return ConfigError(f"{path}{where}: not valid YAML ({problem})" + (f"; {fix}" if fix else ""))
