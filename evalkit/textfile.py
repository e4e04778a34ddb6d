"""Text files that users give: read as UTF-8 (a leading byte-order mark is dropped), or a
one-line error naming the file, the line of the first byte that is not UTF-8, and what was
expected (with a hint when the file looks like UTF-16)."""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.errors import ConfigError, FileFormatError


def read_utf8_text(path: str | os.PathLike) -> str:
    """The text of a UTF-8 file.

    Raises:
        FileFormatError: naming the line of the first byte that is not UTF-8.
        FileNotFoundError, IsADirectoryError, PermissionError: as :func:`open` does.
    """
    p = Path(path)
    raw = p.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        utf16 = raw[:2] in (b"\xff\xfe", b"\xfe\xff")
        raise FileFormatError(p, line, f"byte 0x{raw[exc.start]:02x} is not UTF-8; expected UTF-8 text"
                                       + (" (the file looks like UTF-16: save it as UTF-8)" if utf16 else "")) from None


def read_config_text(path: str | os.PathLike, what: str) -> str:
    """The UTF-8 text of a configuration file the user named (``what``: e.g. ``"role map"``).

    Raises:
        ConfigError: ``PATH: <what> file not found`` or ``PATH: is a folder, expected a <what>
            YAML file``.
        FileFormatError: naming the line of the first byte that is not UTF-8.
    """
    try:
        return read_utf8_text(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: {what} file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, expected a {what} YAML file") from None
