"""The ``evalkit`` command: one entry point, one module per subcommand group.

Each module in :data:`COMMANDS` defines ``register(subparsers)`` which adds its subcommand(s)
and sets ``func`` on the parser; ``func(args)`` returns an exit code. Errors the user can fix
(:class:`~evalkit.errors.EvalkitError`, missing files) print one line and exit 2, no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings

from evalkit import __version__
from evalkit.errors import EvalkitError

#: Subcommand modules under ``evalkit.cli`` (each adds its own parsers).
COMMANDS = (
    "info",
    "convert",
    "score",
    "plot",
    "train",
    "sync",
    "synth",
    "serve",
    "render",
    "report",
    "study",
    "demo",
    "data",
    "compare",
    "embed",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description=(
            "Tell how natural generated character motion is: score clips automatically, run "
            "online pairwise viewing tests, and write statistical reports."
        ),
        epilog="Run 'evalkit COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"evalkit.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"evalkit.cli.{name}":
                continue  # subcommand not built yet
            raise
        module.register(sub)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings in the command's voice, without the source line of the library that raised them."""
    print(f"evalkit: warning: {message}", file=sys.stderr)


def _command_parser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The innermost subcommand parser named in ``argv`` (``evalkit study build ...`` -> build's)."""
    for token in argv:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or token not in sub.choices:
            if sub is not None and not token.startswith("-"):
                break
            continue
        parser = sub.choices[token]
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:  # the usage of the (sub)command that was given, not the top-level one
        _command_parser(parser, sys.argv[1:] if argv is None else argv).error(
            f"unrecognized arguments: {' '.join(extras)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(args.func(args) or 0)
    except EvalkitError as exc:
        print(f"evalkit: error: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"evalkit: error: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evalkit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
