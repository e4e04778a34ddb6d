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
    g.add_argument("--bvh-fps", type=float, default=None,
                   help="frame rate of BVH files instead of their 'Frame Time', for exports that "
                        "state a wrong one (default: the file's)")
    g.add_argument("--roles", metavar="YAML", default=None,
                   help="YAML file mapping roles to joint names, for unusual rigs")
    g.add_argument("--skeleton", metavar="PRESET|YAML", default=None,
                   help="skeleton of joint-position arrays (.npy/.npz/.csv): smpl22 (= humanml3d), smpl24, "
                        "smplh52, smplx55, or a YAML file of joint names and parents (default: from the "
                        "joint count 22/24/52/55; see docs/formats.md)")
    g.add_argument("--array-fps", type=float, default=None, metavar="FPS",
                   help="frame rate of array files that carry none (default: 20 for HumanML3D and MDM "
                        "files; others must give it)")
    g.add_argument("--body-model", metavar="FILE", default=None,
                   help="the official SMPL / SMPL-H / SMPL-X model file (.npz or .pkl) for parameter "
                        "files: exact joints from the clip's betas (default: evalkit's adult skeleton, "
                        "with a warning)")
    g.add_argument("--allow-pickle", action="store_true",
                   help="trust pickled files (MDM results.npy, .pkl models) and load them fully; "
                        "without it only plain data (dicts, lists, text, numbers, arrays) is read")


def no_motion_files(paths) -> "InputError":
    """The error for inputs holding no motion file: names the inputs and every format read."""
    from evalkit.errors import InputError
    from evalkit.motion.formats import MOTION_EXTENSIONS

    return InputError(f"no motion files ({', '.join(MOTION_EXTENSIONS)}; .csv only when named) under "
                      f"{', '.join(map(str, paths))}")


def load_options(args: argparse.Namespace, roles=None):
    """The :class:`~evalkit.motion.formats.LoadOptions` of the ``add_load_options`` flags
    (``roles``: a role map the files are read with, where the command reads them so)."""
    from evalkit.motion.formats import LoadOptions

    return LoadOptions(**_load_kwargs(args), roles=roles)


def _load_kwargs(args: argparse.Namespace) -> dict:
    units = args.units
    try:
        units = float(units)
    except (TypeError, ValueError):
        pass
    out = {"units": units, "up": args.up, "fps": args.amc_fps}
    for key in ("skeleton", "array_fps", "body_model"):
        if getattr(args, key, None) is not None:
            out[key] = getattr(args, key)
    if getattr(args, "allow_pickle", False):
        out["allow_pickle"] = True
    if getattr(args, "bvh_fps", None) is not None:  # only when given: not every caller reads BVH
        from evalkit.motion.formats import check_fps

        out["bvh_fps"] = check_fps(args.bvh_fps, "--bvh-fps")
    return out


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
