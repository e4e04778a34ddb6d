"""Argument helpers shared by subcommands."""

from __future__ import annotations

import argparse


def add_load_options(p: argparse.ArgumentParser) -> None:
    """``--units``, ``--up``, ``--fps-amc``, ``--roles``: how motion files are read."""
    g = p.add_argument_group("reading motion files")
    g.add_argument("--units", default="auto",
                   help="length unit of the files: auto (detect from body size), m, cm, mm, inch, "
                        "cmu (CMU's inches/0.45) or metres per unit (default: auto)")
    g.add_argument("--up", default="auto",
                   help="up axis of the files: auto, y, z, -z, ... (default: auto)")
    g.add_argument("--amc-fps", type=float, default=120.0,
                   help="frame rate of AMC files, which carry none (default: 120, CMU's)")
    g.add_argument("--roles", metavar="YAML", default=None,
                   help="YAML file mapping roles to joint names, for unusual rigs")


def load_kwargs(args: argparse.Namespace) -> dict:
    units = args.units
    try:
        units = float(units)
    except (TypeError, ValueError):
        pass
    return {"units": units, "up": args.up, "fps": args.amc_fps}


class HelpFormatter(argparse.HelpFormatter):
    """Help as every evalkit command shows it: each line of a description or epilog wrapped to
    the terminal, the line breaks written into it kept, and indented lines (example commands)
    printed as written, never broken."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(indent + line if line[:1].isspace() else
                         super(HelpFormatter, self)._fill_text(line, width, indent) if line.strip() else ""
                         for line in text.splitlines())


def add_command(sub, run, name: str, **kwargs) -> argparse.ArgumentParser:
    """The one way to add a subcommand: ``sub.add_parser(name, **kwargs)`` (``help``,
    ``description``, ``epilog``) with :class:`HelpFormatter`, and ``func`` set to ``run``
    (``run(args) -> exit code``; ``None`` for a group of subcommands, whose ``func`` prints the
    group's help and returns 1)."""
    p = sub.add_parser(name, formatter_class=HelpFormatter, **kwargs)
    p.set_defaults(func=run if run is not None else (lambda args: (p.print_help(), 1)[1]))
    return p
